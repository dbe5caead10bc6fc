// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-cli's contract, checked from outside: the binary is run with QProcess.
//   * invalid input (a corpus of bad scenario files, bad --set overrides): exit code exactly 2, nothing
//     on stdout, one "error: ..." line per problem on stderr, naming the offending field path;
//   * valid input: JSON outputs checked against values computed by hand (not by the engine);
//   * I/O: -o writes the file and nothing on stdout; an unwritable -o exits 1 and leaves nothing.
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QJsonValue>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "clirunner.h"

#include <cmath>

namespace {

// The invalid-input contract; returns what is violated ("" when all holds). One string, so that a
// test checks it with one QVERIFY2 and a known product bug can be marked with one QEXPECT_FAIL.
QString invalidInputViolation(const QStringList& args, const QStringList& fields)
{
    const CliResult r = runCli(args);
    QStringList why;
    if (!r.finished)
        why << QStringLiteral("did not finish within 60 s");
    else if (r.status != QProcess::NormalExit)
        why << QStringLiteral("crashed (signal)");
    else if (r.exitCode != 2)
        why << QStringLiteral("exit code %1, not 2").arg(r.exitCode);
    if (!r.out.isEmpty())
        why << QStringLiteral("stdout is not empty");
    if (r.err.trimmed().isEmpty())
        why << QStringLiteral("stderr is empty");
    else if (!r.err.endsWith('\n'))
        why << QStringLiteral("stderr does not end with a newline");
    for (const QByteArray& line : r.err.trimmed().split('\n'))
        if (!r.err.trimmed().isEmpty() && !line.startsWith("error: "))
            why << QStringLiteral("stderr line without 'error: ': [%1]").arg(QString::fromUtf8(line));
    for (const QString& f : fields)
        if (!r.err.contains(f.toUtf8()))
            why << QStringLiteral("stderr does not name '%1'").arg(f);
    return why.isEmpty() ? QString() : why.join(QStringLiteral("; ")) + u'\n' + describe(args, r);
}

// Runs a command that must succeed and print one JSON object on stdout.
QJsonObject runJson(const QStringList& args)
{
    const CliResult r = runCli(args);
    const QByteArray ctx = describe(args, r).toUtf8();
    [&] {
        QVERIFY2(r.finished && r.status == QProcess::NormalExit, ctx.constData());
        QVERIFY2(r.exitCode == 0, ctx.constData());
        QVERIFY2(r.err.isEmpty(), ("stderr not empty: " + ctx).constData());
    }();
    QJsonParseError pe;
    const QJsonDocument doc = QJsonDocument::fromJson(r.out, &pe);
    if (pe.error != QJsonParseError::NoError || !doc.isObject()) {
        QTest::qFail(("stdout is not a JSON object (" + pe.errorString().toUtf8() + "): " + ctx).constData(), __FILE__,
                     __LINE__);
        return {};
    }
    return doc.object();
}

// a.b.c lookup in a JSON object; Undefined when any step is missing.
QJsonValue at(const QJsonObject& o, const QString& path)
{
    QJsonValue v = o;
    for (const QString& k : path.split(u'.')) {
        if (!v.isObject())
            return QJsonValue(QJsonValue::Undefined);
        v = v.toObject().value(k);
    }
    return v;
}

bool nearlyEqual(double actual, double expected, double rel)
{
    return std::fabs(actual - expected) <= rel * std::fabs(expected);
}

#define NAPKIN_CHECK_CLOSE(actual, expected, rel)                                                                      \
    QVERIFY2(nearlyEqual((actual), (expected), (rel)), qPrintable(QStringLiteral("%1 = %2, expected %3 (rel %4)")      \
                                                                      .arg(QStringLiteral(#actual))                    \
                                                                      .arg((actual), 0, 'g', 17)                       \
                                                                      .arg((expected), 0, 'g', 17)                     \
                                                                      .arg(rel)))

QJsonObject findById(const QJsonArray& arr, const QString& id)
{
    for (const QJsonValue& v : arr)
        if (v.toObject().value(QStringLiteral("id")).toString() == id)
            return v.toObject();
    return {};
}

} // namespace

class TestCli : public QObject {
    Q_OBJECT

private slots:
    void initTestCase();

    // Invalid input.
    void manifestCoversCorpus();
    void badScenario_data();
    void badScenario();
    void badSet_data();
    void badSet();
    void badArguments_data();
    void badArguments();
    void deeplyNestedValue();

    // Valid input, hand-computed values.
    void planDefaultJson();
    void plan70BOn1024Gpus();
    void planWithCalibrationProfile();
    void fitFp32();
    void planPredicted();
    void searchJson();
    void gpusForDeadline();
    void opGemm();
    void opRelu();
    void presetsGpus();
    void presetsModels();
    void planMarkdownAndCsv();

    // I/O and commands.
    void outputFile();
    void outputToMissingDirectory();
    void outputOnFullDisk();
    void newCommands();
    void unknownCommand();
    void help_data();
    void help();
};

void TestCli::initTestCase()
{
    QVERIFY2(QFileInfo(cliPath()).isExecutable(), qPrintable(cliPath()));
    QVERIFY2(QFileInfo(dataPath(QStringLiteral("bad_scenarios/manifest.json"))).isFile(), NAPKIN_TEST_DATA);
}

// ---------------------------------------------------------------------------------------------
// Invalid input

namespace {
QJsonArray manifestCases()
{
    QFile f(dataPath(QStringLiteral("bad_scenarios/manifest.json")));
    if (!f.open(QIODevice::ReadOnly))
        return {};
    return QJsonDocument::fromJson(f.readAll()).object().value(QStringLiteral("cases")).toArray();
}
QStringList fieldsOf(const QJsonValue& v)
{
    QStringList out;
    if (v.isString())
        out << v.toString();
    for (const QJsonValue& e : v.toArray())
        out << e.toString();
    return out;
}
} // namespace

void TestCli::manifestCoversCorpus()
{
    const QJsonArray cases = manifestCases();
    QVERIFY2(cases.size() >= 35, qPrintable(QString::number(cases.size())));
    QStringList listed;
    for (const QJsonValue& c : cases) {
        const QString file = c.toObject().value(QStringLiteral("file")).toString();
        QVERIFY2(!file.isEmpty(), "a manifest entry without a file");
        QVERIFY2(!fieldsOf(c.toObject().value(QStringLiteral("field"))).isEmpty(), qPrintable(file));
        QVERIFY2(!listed.contains(file), qPrintable(QStringLiteral("listed twice: ") + file));
        listed << file;
    }
    QDir dir(dataPath(QStringLiteral("bad_scenarios")));
    QStringList onDisk = dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
    onDisk.removeAll(QStringLiteral("manifest.json"));
    listed.sort();
    QCOMPARE(listed, onDisk);
}

void TestCli::badScenario_data()
{
    QTest::addColumn<QString>("file");
    QTest::addColumn<QStringList>("fields");
    QTest::addColumn<QString>("knownBug");
    for (const QJsonValue& c : manifestCases()) {
        const QJsonObject o = c.toObject();
        const QString file = o.value(QStringLiteral("file")).toString();
        QTest::newRow(qPrintable(file)) << dataPath(QStringLiteral("bad_scenarios/") + file)
                                        << fieldsOf(o.value(QStringLiteral("field")))
                                        << o.value(QStringLiteral("known_bug")).toString();
    }
}

void TestCli::badScenario()
{
    QFETCH(QString, file);
    QFETCH(QStringList, fields);
    QFETCH(QString, knownBug);
    const QString why = invalidInputViolation(
        {QStringLiteral("plan"), file, QStringLiteral("--format"), QStringLiteral("json")}, fields);
    // A manifest entry with "known_bug" pins a reported product bug: remove the key once it is fixed.
    if (!knownBug.isEmpty())
        QEXPECT_FAIL("", qPrintable(knownBug), Abort);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestCli::badSet_data()
{
    QTest::addColumn<QStringList>("sets");
    QTest::addColumn<QString>("field");
    QTest::addColumn<QString>("knownBug");
    auto row = [](const char* name, QStringList sets, const char* field, const char* bug = "") {
        QTest::newRow(name) << sets << QString::fromUtf8(field) << QString::fromUtf8(bug);
    };
    row("gpus=0", {QStringLiteral("cluster.gpus=0")}, "cluster.gpus");
    row("gpus=-3", {QStringLiteral("cluster.gpus=-3")}, "cluster.gpus");
    row("tokens=-1", {QStringLiteral("training.tokens=-1")}, "training.tokens");
    row("tokens=nan", {QStringLiteral("training.tokens=nan")}, "training.tokens");
    row("seq_len=0", {QStringLiteral("training.seq_len=0")}, "training.seq_len");
    row("micro_batch=0.5", {QStringLiteral("training.micro_batch=0.5")}, "training.micro_batch");
    row("plan=nope", {QStringLiteral("precision.plan=nope")}, "precision.plan");
    row("weights=tf32", {QStringLiteral("precision.weights=tf32")}, "precision.weights");
    row("preset=nope", {QStringLiteral("model.preset=nope")}, "model.preset");
    row("params=-1", {QStringLiteral("model.params=-1")}, "model.params");
    row("model={}", {QStringLiteral("model={}")}, "model");
    row("nosuch.key", {QStringLiteral("nosuch.key=1")}, "nosuch");
    row("training.nosuch", {QStringLiteral("training.nosuch=1")}, "training.nosuch");
    row("no '='", {QStringLiteral("training.seq_len")}, "--set");
    row("empty path", {QStringLiteral("=5")}, "--set");
    row("empty component", {QStringLiteral("training..seq_len=5")}, "training..seq_len");
    row("through a number", {QStringLiteral("training.seq_len.x=1")}, "training.seq_len");
    row("mfu string", {QStringLiteral("cluster.mfu=\"abc\"")}, "cluster.mfu");
    row("mfu bare word", {QStringLiteral("cluster.mfu=abc")}, "cluster.mfu");
    row("gpu=nope", {QStringLiteral("cluster.gpu=nope")}, "cluster.gpu");
    row("zero=4", {QStringLiteral("parallel.zero=4")}, "parallel.zero");
    row("training=5", {QStringLiteral("training=5")}, "training");
    row("second of two", {QStringLiteral("cluster.gpus=8"), QStringLiteral("cluster.mfu=2")}, "cluster.mfu");
    row("newline in assignment", {QStringLiteral("training.seq_len\nfoo")}, "--set");
}

void TestCli::badSet()
{
    QFETCH(QStringList, sets);
    QFETCH(QString, field);
    QFETCH(QString, knownBug);
    QStringList args{QStringLiteral("plan"), QStringLiteral("--format"), QStringLiteral("json")};
    for (const QString& s : sets)
        args << QStringLiteral("--set") << s;
    QString why = invalidInputViolation(args, {field});
    // The same overrides must be refused by fit as well.
    args[0] = QStringLiteral("fit");
    why += invalidInputViolation(args, {field});
    if (!knownBug.isEmpty())
        QEXPECT_FAIL("", qPrintable(knownBug), Abort);
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestCli::badArguments_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("field");
    QTest::newRow("missing file") << QStringList{QStringLiteral("plan"), dataPath(QStringLiteral("no-such-file.json"))}
                                  << QStringLiteral("no-such-file.json");
    QTest::newRow("unknown format") << QStringList{QStringLiteral("plan"), QStringLiteral("--format"),
                                                   QStringLiteral("xml")}
                                    << QStringLiteral("--format");
    QTest::newRow("unknown option") << QStringList{QStringLiteral("plan"), QStringLiteral("--frobnicate")}
                                    << QStringLiteral("--frobnicate");
    QTest::newRow("--set without value") << QStringList{QStringLiteral("plan"), QStringLiteral("--set")}
                                         << QStringLiteral("--set");
    QTest::newRow("op gemm missing --k") << QStringList{QStringLiteral("op"),  QStringLiteral("gemm"),
                                                        QStringLiteral("--m"), QStringLiteral("8"),
                                                        QStringLiteral("--n"), QStringLiteral("8")}
                                         << QStringLiteral("--k");
    QTest::newRow("op --n 0") << QStringList{QStringLiteral("op"), QStringLiteral("relu"), QStringLiteral("--n"),
                                             QStringLiteral("0")}
                              << QStringLiteral("--n");
    QTest::newRow("op --dtype tf32") << QStringList{QStringLiteral("op"),      QStringLiteral("relu"),
                                                    QStringLiteral("--n"),     QStringLiteral("8"),
                                                    QStringLiteral("--dtype"), QStringLiteral("tf32")}
                                     << QStringLiteral("--dtype");
    QTest::newRow("op unknown kind") << QStringList{QStringLiteral("op"), QStringLiteral("conv"), QStringLiteral("--n"),
                                                    QStringLiteral("8")}
                                     << QStringLiteral("conv");
    QTest::newRow("presets unknown") << QStringList{QStringLiteral("presets"), QStringLiteral("cpus")}
                                     << QStringLiteral("cpus");
    QTest::newRow("search --top 0") << QStringList{QStringLiteral("search"), QStringLiteral("--top"),
                                                   QStringLiteral("0")}
                                    << QStringLiteral("--top");
    QTest::newRow("search --top x") << QStringList{QStringLiteral("search"), QStringLiteral("--top"),
                                                   QStringLiteral("x")}
                                    << QStringLiteral("--top");
    QTest::newRow("gpus-for without deadline")
        << QStringList{QStringLiteral("gpus-for")} << QStringLiteral("--deadline-days");
    QTest::newRow("gpus-for negative deadline")
        << QStringList{QStringLiteral("gpus-for"), QStringLiteral("--deadline-days"), QStringLiteral("-3")}
        << QStringLiteral("--deadline-days");
    QTest::newRow("step_time.mode") << QStringList{QStringLiteral("plan"), QStringLiteral("--set"),
                                                   QStringLiteral("step_time.mode=fast")}
                                    << QStringLiteral("step_time.mode");
}

void TestCli::badArguments()
{
    QFETCH(QStringList, args);
    QFETCH(QString, field);
    const QString why = invalidInputViolation(args, {field});
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

void TestCli::deeplyNestedValue()
{
    // 200000 nested arrays as a value: must be refused as input, not overflow the stack.
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString file = tmp.filePath(QStringLiteral("deep.json"));
    QFile f(file);
    QVERIFY(f.open(QIODevice::WriteOnly));
    const int depth = 200000;
    f.write("{\"training\": {\"seq_len\": " + QByteArray(depth, '[') + QByteArray(depth, ']') + "}}\n");
    f.close();
    // No field is required: refusing the document while parsing it is as good as refusing the value.
    const QString why =
        invalidInputViolation({QStringLiteral("plan"), file, QStringLiteral("--format"), QStringLiteral("json")}, {});
    QVERIFY2(why.isEmpty(), qPrintable(why));
}

// ---------------------------------------------------------------------------------------------
// Valid input

void TestCli::planDefaultJson()
{
    const QJsonObject j = runJson({QStringLiteral("plan"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(j.value(QStringLiteral("schema")).toString(), QStringLiteral("napkin.plan/1"));
    // Llama-2-7B: 32 x (4 x 4096^2 + 3 x 4096 x 11008 + 2 x 4096) + 2 x 32000 x 4096 + 4096 = 6 738 415 616.
    QCOMPARE(at(j, QStringLiteral("params.total")).toDouble(), 6738415616.0);
    const QJsonObject mem = at(j, QStringLiteral("memory.per_gpu")).toObject();
    double sum = 0;
    for (const char* b :
         {"weights", "gradients", "master_weights", "optimizer_states", "activations", "temporaries", "overhead"}) {
        const QJsonValue v = mem.value(QString::fromUtf8(b));
        QVERIFY2(v.isDouble() && v.toDouble() >= 0, b);
        sum += v.toDouble();
    }
    const double total = mem.value(QStringLiteral("total")).toDouble();
    QVERIFY(total > 0);
    NAPKIN_CHECK_CLOSE(total, sum, 1e-9);
}

// cluster.gpu=calibration:FILE: the hand-set H100 profile's measured values reach the plan
// (hbm_triad 2.93e12 B/s, gemm_bf16 7.9e14 FLOP/s); a hostile profile is invalid input naming the field.
void TestCli::planWithCalibrationProfile()
{
    const QString good =
        QStringLiteral("cluster.gpu=calibration:") + dataPath(QStringLiteral("calibration/good_h100.json"));
    const QJsonObject j = runJson(
        {QStringLiteral("plan"), QStringLiteral("--set"), good, QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(at(j, QStringLiteral("hardware.origin")).toString(), QStringLiteral("measured"));
    // The spec sheet's peak and bandwidth stay hardware.peak_flops / bandwidth (MFU is against them);
    // the measured rates are the achievable ones.
    QVERIFY2(at(j, QStringLiteral("hardware.source")).toString().startsWith(QStringLiteral("spec sheet")),
             qPrintable(at(j, QStringLiteral("hardware.source")).toString()));
    QCOMPARE(at(j, QStringLiteral("hardware.bandwidth")).toDouble(), 3.35e12);
    QCOMPARE(at(j, QStringLiteral("hardware.peak_flops")).toDouble(), 989.5e12);
    QCOMPARE(at(j, QStringLiteral("hardware.achievable_bandwidth")).toDouble(), 2.93e12);
    QCOMPARE(at(j, QStringLiteral("hardware.achievable_flops")).toDouble(), 7.9e14);
    QVERIFY2(at(j, QStringLiteral("hardware.achievable_flops_source"))
                 .toString()
                 .startsWith(QStringLiteral("measured by napkin-probe (")),
             qPrintable(at(j, QStringLiteral("hardware.achievable_flops_source")).toString()));
    NAPKIN_CHECK_CLOSE(at(j, QStringLiteral("roofline.ridge")).toDouble(), 989.5e12 / 3.35e12, 1e-12);
    QCOMPARE(at(j, QStringLiteral("hardware.calibration.matched_gpu")).toString(), QStringLiteral("h100-sxm"));

    const QString bad =
        QStringLiteral("cluster.gpu=calibration:") + dataPath(QStringLiteral("calibration/negative.json"));
    const QString v =
        invalidInputViolation({QStringLiteral("plan"), QStringLiteral("--set"), bad},
                              {QStringLiteral("cluster.gpu"), QStringLiteral("devices[0].results[8].median")});
    QVERIFY2(v.isEmpty(), qPrintable(v));
    const QString driver =
        QStringLiteral("cluster.gpu=calibration:") + dataPath(QStringLiteral("calibration/no_driver.json"));
    const QString w = invalidInputViolation({QStringLiteral("plan"), QStringLiteral("--set"), driver},
                                            {QStringLiteral("cluster.gpu"), QStringLiteral("no_driver")});
    QVERIFY2(w.isEmpty(), qPrintable(w));
}

void TestCli::plan70BOn1024Gpus()
{
    const QJsonObject j =
        runJson({QStringLiteral("plan"), QStringLiteral("--set"), QStringLiteral("model={\"params\": 70e9}"),
                 QStringLiteral("--set"), QStringLiteral("training.tokens=15e12"), QStringLiteral("--set"),
                 QStringLiteral("cluster.gpus=1024"), QStringLiteral("--set"), QStringLiteral("flops.convention=6PT"),
                 QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(at(j, QStringLiteral("params.total")).toDouble(), 70e9);
    // 6 x 70e9 x 15e12 = 6.3e24 FLOPs.
    NAPKIN_CHECK_CLOSE(at(j, QStringLiteral("compute.training_flops")).toDouble(), 6.3e24, 1e-12);
    // 6.3e24 / (1024 GPUs x 0.5 MFU x 989.5e12 dense bf16 FLOP/s of an H100 SXM) / 86400 = 143.93 days.
    const double days = at(j, QStringLiteral("time.days")).toDouble();
    NAPKIN_CHECK_CLOSE(days, 143.9, 1e-3);
    NAPKIN_CHECK_CLOSE(days, 6.3e24 / (1024 * 0.5 * 989.5e12) / 86400, 1e-9);
}

void TestCli::fitFp32()
{
    const QJsonObject j = runJson({QStringLiteral("fit"), QStringLiteral("--set"), QStringLiteral("cluster.gpus=8"),
                                   QStringLiteral("--set"), QStringLiteral("precision.plan=fp32"),
                                   QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    // fp32 weights + fp32 gradients + two fp32 Adam states = 16 bytes/param; 8 x 80e9 bytes / 16 = 40e9.
    NAPKIN_CHECK_CLOSE(at(j, QStringLiteral("states_only.max_params")).toDouble(), 40e9, 1e-12);
    NAPKIN_CHECK_CLOSE(at(j, QStringLiteral("states_only.bytes_per_param")).toDouble(), 16.0, 1e-12);
    // A model that does not fit at micro-batch 1 is said so, never "largest micro-batch: 0".
    const QStringList big{QStringLiteral("fit"), QStringLiteral("--set"), QStringLiteral("model.preset=llama-2-70b"),
                          QStringLiteral("--set"), QStringLiteral("cluster.gpus=1")};
    const CliResult r = runCli(big);
    QVERIFY2(r.exitCode == 0, qPrintable(describe(big, r)));
    QVERIFY(!r.out.contains("micro-batch for Llama 2 70B: 0"));
    QVERIFY(r.out.contains("does not fit even at micro-batch 1"));
}

void TestCli::planPredicted()
{
    // The predicted mode: time.mode, and time.breakdown whose parts sum to the step.
    const QJsonObject j = runJson(
        {QStringLiteral("plan"), QStringLiteral("--set"), QStringLiteral("step_time.mode=predicted"),
         QStringLiteral("--set"), QStringLiteral("parallel.tp=8"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(at(j, QStringLiteral("time.mode")).toString(), QStringLiteral("predicted"));
    const QJsonObject b = at(j, QStringLiteral("time.breakdown")).toObject();
    double sum = 0;
    for (const char* k :
         {"compute", "recompute", "tp_comm", "cp_comm", "ep_comm", "pp_comm", "bubble", "dp_comm", "optimizer"}) {
        QVERIFY2(b.contains(QLatin1String(k)), k);
        sum += b.value(QLatin1String(k)).toDouble();
    }
    for (const char* k : {"launch", "grad_clip", "checkpoint_save", "comm_sm_share"})
        sum += b.value(QLatin1String("overheads")).toObject().value(QLatin1String(k)).toDouble();
    // The same layout at spec peaks and nominal links is faster, and no MFU is above the ceiling.
    QVERIFY(at(j, QStringLiteral("time.breakdown_at_peak.step")).toDouble() <
            at(j, QStringLiteral("time.step_seconds")).toDouble());
    QVERIFY(at(j, QStringLiteral("time.mfu")).toDouble() <= at(j, QStringLiteral("time.mfu_ceiling")).toDouble());
    QVERIFY(at(j, QStringLiteral("compute.executed_flops_per_step")).toDouble() > 0);
    NAPKIN_CHECK_CLOSE(sum, at(j, QStringLiteral("time.step_seconds")).toDouble(), 1e-12);
    QVERIFY(at(j, QStringLiteral("time.breakdown.tp_comm")).toDouble() > 0);
    QCOMPARE(at(j, QStringLiteral("time.breakdown.links.tp.crosses_nodes")).toBool(), false);
    // In MFU mode there is no breakdown and the MFU is the scenario's.
    const QJsonObject m = runJson({QStringLiteral("plan"), QStringLiteral("--format"), QStringLiteral("json")});
    QCOMPARE(at(m, QStringLiteral("time.mode")).toString(), QStringLiteral("mfu"));
    QVERIFY(at(m, QStringLiteral("time.breakdown")).isUndefined());
    QCOMPARE(at(m, QStringLiteral("memory.per_stage")).toArray().size(), 1);
}

void TestCli::searchJson()
{
    const QStringList base{QStringLiteral("--set"), QStringLiteral("cluster.gpus=16"), QStringLiteral("--set"),
                           QStringLiteral("training.global_batch=64")};
    const QJsonObject j = runJson(
        QStringList{QStringLiteral("search")} + base +
        QStringList{QStringLiteral("--top"), QStringLiteral("3"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(j.value(QStringLiteral("schema")).toString(), QStringLiteral("napkin.search/1"));
    const QJsonArray results = j.value(QStringLiteral("results")).toArray();
    QCOMPARE(results.size(), 3);
    QVERIFY(j.value(QStringLiteral("evaluated")).toInt() >= j.value(QStringLiteral("feasible")).toInt());
    double previous = 0;
    for (const auto& v : results) {
        const QJsonObject r = v.toObject();
        const QJsonObject l = r.value(QStringLiteral("layout")).toObject();
        QCOMPARE(l.value(QStringLiteral("tp")).toInt() * l.value(QStringLiteral("pp")).toInt() *
                     l.value(QStringLiteral("cp")).toInt() * l.value(QStringLiteral("dp")).toInt(),
                 16);
        const double step = r.value(QStringLiteral("step_seconds")).toDouble();
        QVERIFY(step >= previous);
        previous = step;
        QVERIFY(!r.value(QStringLiteral("why")).toString().isEmpty());
    }
    // The best row, planned on its own in predicted mode, gives the same step time.
    const QJsonObject l = results.first().toObject().value(QStringLiteral("layout")).toObject();
    QStringList plan{QStringLiteral("plan")};
    plan += base;
    for (const char* k : {"tp", "pp", "virtual_stages", "cp", "dp", "zero"})
        plan += {QStringLiteral("--set"),
                 QStringLiteral("parallel.%1=%2").arg(QLatin1String(k)).arg(l.value(QLatin1String(k)).toInt())};
    plan += {QStringLiteral("--set"),
             QStringLiteral("training.micro_batch=%1").arg(l.value(QStringLiteral("micro_batch")).toInt()),
             QStringLiteral("--set"),
             QStringLiteral("training.recompute=") + l.value(QStringLiteral("recompute")).toString(),
             QStringLiteral("--set"),
             QStringLiteral("step_time.mode=predicted"),
             QStringLiteral("--format"),
             QStringLiteral("json")};
    const QJsonObject p = runJson(plan);
    QVERIFY(!QTest::currentTestFailed());
    NAPKIN_CHECK_CLOSE(at(p, QStringLiteral("time.step_seconds")).toDouble(),
                       results.first().toObject().value(QStringLiteral("step_seconds")).toDouble(), 1e-9);
}

void TestCli::gpusForDeadline()
{
    // The seeds' 70B on 15T tokens at MFU 0.5: 6.3e24 FLOPs / (0.5 x 989.5e12 x 144 days) = 1,023.4 GPUs,
    // so 1,024 H100s meet a 144-day deadline (ZeRO-3 so that the states fit).
    const QJsonObject j =
        runJson({QStringLiteral("gpus-for"), QStringLiteral("--set"), QStringLiteral("model={\"params\": 70e9}"),
                 QStringLiteral("--set"), QStringLiteral("training.tokens=15e12"), QStringLiteral("--set"),
                 QStringLiteral("flops.convention=6PT"), QStringLiteral("--set"), QStringLiteral("parallel.zero=3"),
                 QStringLiteral("--set"), QStringLiteral("training.recompute=full"), QStringLiteral("--deadline-days"),
                 QStringLiteral("144"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    QCOMPARE(j.value(QStringLiteral("found")).toBool(), true);
    QCOMPARE(j.value(QStringLiteral("gpus")).toInt(), 1024);
    QVERIFY(j.value(QStringLiteral("days")).toDouble() <= 144);
}

void TestCli::opGemm()
{
    const QJsonObject j = runJson({QStringLiteral("op"), QStringLiteral("gemm"), QStringLiteral("--m"),
                                   QStringLiteral("128"), QStringLiteral("--k"), QStringLiteral("4096"),
                                   QStringLiteral("--n"), QStringLiteral("4096"), QStringLiteral("--dtype"),
                                   QStringLiteral("bf16"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    // 2mkn / (2 (mk + kn + mn)) = 4294967296 / 35651584 = 120.4706; H100 ridge 989.5e12 / 3.35e12 = 295.
    NAPKIN_CHECK_CLOSE(j.value(QStringLiteral("intensity")).toDouble(), 120.47, 1e-3);
    NAPKIN_CHECK_CLOSE(j.value(QStringLiteral("flops")).toDouble(), 2.0 * 128 * 4096 * 4096, 1e-12);
    QCOMPARE(j.value(QStringLiteral("bound")).toString(), QStringLiteral("memory"));
}

void TestCli::opRelu()
{
    const QJsonObject j = runJson({QStringLiteral("op"), QStringLiteral("relu"), QStringLiteral("--n"),
                                   QStringLiteral("1000000"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    // n FLOPs over n bf16 reads + n bf16 writes = 1 / 4.
    NAPKIN_CHECK_CLOSE(j.value(QStringLiteral("intensity")).toDouble(), 0.25, 1e-12);
    QCOMPARE(j.value(QStringLiteral("bound")).toString(), QStringLiteral("memory"));
}

void TestCli::presetsGpus()
{
    const QJsonObject j = runJson(
        {QStringLiteral("presets"), QStringLiteral("gpus"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    const QJsonObject h100 = findById(j.value(QStringLiteral("gpus")).toArray(), QStringLiteral("h100-sxm"));
    QVERIFY2(!h100.isEmpty(), "no h100-sxm in presets gpus");
    QCOMPARE(h100.value(QStringLiteral("memory_bytes")).toDouble(), 80e9);
    QVERIFY(!j.contains(QStringLiteral("models")));
}

void TestCli::presetsModels()
{
    const QJsonObject j = runJson(
        {QStringLiteral("presets"), QStringLiteral("models"), QStringLiteral("--format"), QStringLiteral("json")});
    QVERIFY(!QTest::currentTestFailed());
    // Llama-3-8B: 32 x (4096^2 x 2 + 2 x 4096 x 1024 + 3 x 4096 x 14336 + 2 x 4096) + 2 x 128256 x 4096 + 4096.
    const QJsonObject m = findById(j.value(QStringLiteral("models")).toArray(), QStringLiteral("llama-3-8b"));
    QVERIFY2(!m.isEmpty(), "no llama-3-8b in presets models");
    QCOMPARE(m.value(QStringLiteral("params")).toDouble(), 8030261248.0);
}

void TestCli::planMarkdownAndCsv()
{
    for (const char* fmt : {"md", "csv", "text"}) {
        const QStringList args{QStringLiteral("plan"), QStringLiteral("--format"), QString::fromUtf8(fmt)};
        const CliResult r = runCli(args);
        QVERIFY2(r.status == QProcess::NormalExit && r.exitCode == 0 && r.err.isEmpty(), qPrintable(describe(args, r)));
        QVERIFY2(!r.out.trimmed().isEmpty(), fmt);
        if (QByteArray(fmt) == "csv")
            QCOMPARE(r.out.left(r.out.indexOf('\n')), QByteArray("section,name,value,unit"));
        if (QByteArray(fmt) == "md") {
            // The executive summary under the title and the sensitivities at the end, as the
            // Markdown report has them (issue 20): core::planMarkdownWithSummary.
            const auto summary = r.out.indexOf("## Summary\n"), memory = r.out.indexOf("## Memory per GPU\n");
            QVERIFY2(summary > 0 && memory > summary, r.out.left(400).constData());
            for (const char* row : {"| Verdict | Fits", "| Time | ", "| GPUs | ", "| Layout | ", "| Main risk | "})
                QVERIFY2(r.out.mid(summary, memory - summary).contains(row), row);
            QVERIFY(r.out.contains("## What would change the answer\n\n| input | change | memory per GPU | days |"));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// I/O and commands

void TestCli::outputFile()
{
    QTemporaryDir tmp;
    QVERIFY(tmp.isValid());
    const QString file = tmp.filePath(QStringLiteral("plan.json"));
    const QStringList args{QStringLiteral("plan"), QStringLiteral("--format"), QStringLiteral("json"),
                           QStringLiteral("-o"), file};
    const CliResult r = runCli(args);
    QVERIFY2(r.status == QProcess::NormalExit && r.exitCode == 0, qPrintable(describe(args, r)));
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(args, r)));
    QVERIFY2(r.err.isEmpty(), qPrintable(describe(args, r)));
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    const QJsonDocument doc = QJsonDocument::fromJson(f.readAll());
    QCOMPARE(doc.object().value(QStringLiteral("schema")).toString(), QStringLiteral("napkin.plan/1"));
    // Nothing else left in the directory (no temporary file from the atomic write).
    QCOMPARE(QDir(tmp.path()).entryList(QDir::Files | QDir::Hidden), QStringList{QStringLiteral("plan.json")});
}

void TestCli::outputToMissingDirectory()
{
    const QString file = QStringLiteral("/nonexistent-dir/x.json");
    const QStringList args{QStringLiteral("plan"), QStringLiteral("--format"), QStringLiteral("json"),
                           QStringLiteral("-o"), file};
    const CliResult r = runCli(args);
    QVERIFY2(r.status == QProcess::NormalExit, qPrintable(describe(args, r)));
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.out.isEmpty(), qPrintable(describe(args, r)));
    QVERIFY2(r.err.startsWith("error: "), qPrintable(describe(args, r)));
    QVERIFY2(r.err.contains(file.toUtf8()), qPrintable(describe(args, r)));
    QVERIFY(!QFileInfo::exists(file));
}

void TestCli::outputOnFullDisk()
{
    // A full disk, simulated with a file-size limit: writes past 1 KB fail with EFBIG (SIGXFSZ is
    // ignored so the process sees the error). The previous file must survive, with no temporary left.
    QTemporaryDir dir;
    const QString file = dir.filePath(QStringLiteral("plan.json"));
    {
        QFile f(file);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("previous contents\n");
    }
    QProcess p;
    p.start(QStringLiteral("/bin/sh"),
            {QStringLiteral("-c"),
             QStringLiteral("trap '' XFSZ; ulimit -f 2; exec \"$0\" plan --format json -o \"$1\""), cliPath(), file});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitStatus(), QProcess::NormalExit);
    QCOMPARE(p.exitCode(), 1);
    const QByteArray err = p.readAllStandardError();
    QVERIFY2(err.startsWith("error: ") && err.contains(file.toUtf8()), err.constData());
    QFile f(file);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(f.readAll(), QByteArray("previous contents\n"));
    QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 1); // no temporary left behind
}

void TestCli::newCommands()
{
    // dtype: CS336's facts about 1e-8 (underflows in fp16, survives in bf16).
    CliResult r =
        runCli({QStringLiteral("dtype"), QStringLiteral("1e-8"), QStringLiteral("--format"), QStringLiteral("json")});
    QCOMPARE(r.exitCode, 0);
    const auto dt = QJsonDocument::fromJson(r.out).object();
    bool fp16Underflow = false, bf16Survives = false;
    for (const auto& v : dt.value(QStringLiteral("formats")).toArray()) {
        const auto o = v.toObject();
        if (o.value(QStringLiteral("dtype")).toString() == QStringLiteral("fp16"))
            fp16Underflow = o.value(QStringLiteral("underflow")).toBool();
        if (o.value(QStringLiteral("dtype")).toString() == QStringLiteral("bf16"))
            bf16Survives =
                !o.value(QStringLiteral("underflow")).toBool() && o.value(QStringLiteral("stored")).toDouble() > 0;
    }
    QVERIFY(fp16Underflow && bf16Survives);
    QCOMPARE(runCli({QStringLiteral("dtype"), QStringLiteral("abc")}).exitCode, 2);
    // reconcile: 6PT, 7e9 params, 8 H100 at 989.5 TFLOP/s, 64 x 4096 tokens per step in 2 s.
    r = runCli({QStringLiteral("reconcile"), QStringLiteral("--set"), QStringLiteral("model.params=7e9"),
                QStringLiteral("--set"), QStringLiteral("flops.convention=6PT"), QStringLiteral("--set"),
                QStringLiteral("cluster.gpus=8"), QStringLiteral("--set"), QStringLiteral("training.global_batch=64"),
                QStringLiteral("--step-time"), QStringLiteral("2"), QStringLiteral("--peak-allocated"),
                QStringLiteral("60e9"), QStringLiteral("--format"), QStringLiteral("json")});
    QCOMPARE(r.exitCode, 0);
    const auto rec = QJsonDocument::fromJson(r.out).object();
    const double mfu = rec.value(QStringLiteral("measured")).toObject().value(QStringLiteral("mfu")).toDouble();
    QVERIFY(std::abs(mfu - 6 * 7e9 * 131072 / (8 * 989.5e12)) < 1e-9);
    QCOMPARE(rec.value(QStringLiteral("measured")).toObject().value(QStringLiteral("tokens_per_second")).toDouble(),
             131072.0);
    QVERIFY(rec.value(QStringLiteral("memory")).toObject().contains(QStringLiteral("gap_bytes")));
    QCOMPARE(runCli({QStringLiteral("reconcile"), QStringLiteral("--step-time"), QStringLiteral("-1")}).exitCode, 2);
    QCOMPARE(runCli({QStringLiteral("reconcile")}).exitCode, 2);
}

void TestCli::unknownCommand()
{
    const QStringList args{QStringLiteral("frobnicate")};
    const CliResult r = runCli(args);
    QVERIFY2(r.status == QProcess::NormalExit, qPrintable(describe(args, r)));
    QCOMPARE(r.exitCode, 2);
    QVERIFY(r.out.isEmpty());
    QVERIFY(r.err.startsWith("error: "));
    QVERIFY(r.err.contains("frobnicate"));
}

void TestCli::help_data()
{
    QTest::addColumn<QStringList>("args");
    QTest::newRow("--help") << QStringList{QStringLiteral("--help")};
    QTest::newRow("help") << QStringList{QStringLiteral("help")};
    QTest::newRow("--version") << QStringList{QStringLiteral("--version")};
}

void TestCli::help()
{
    QFETCH(QStringList, args);
    const CliResult r = runCli(args);
    QVERIFY2(r.status == QProcess::NormalExit, qPrintable(describe(args, r)));
    QCOMPARE(r.exitCode, 0);
    QVERIFY(!r.out.isEmpty());
    QVERIFY(r.err.isEmpty());
}

QTEST_GUILESS_MAIN(TestCli)
#include "tst_cli.moc"
