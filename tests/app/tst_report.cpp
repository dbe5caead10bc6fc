// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Budget reports end to end through napkin::report: PDF text (pdftotext) and page size (pdfinfo),
// XHTML that an XML parser reads, CSV equal to the plan, JSON valid against docs/plan.schema.json
// (with a small validator for type/required/properties/items/enum/minimum), Markdown with its PNGs,
// charts, comparisons and atomic writes (the CLI without a display: tst_report_helper). Headline
// numbers are computed here by hand (6·P·T, F / (G·C·MFU)), not taken from core::estimate.
#include "jsonschema.h"
#include "reportsupport.h"
#include "report.h"

#include "catalog.h"
#include "estimate.h"
#include "format.h"
#include "scenario.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLocale>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>
#include <QSvgRenderer>
#include <QPainter>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <cmath>

using nlohmann::json;
namespace report = napkin::report;
namespace core = napkin::core;

namespace {

using napkin::test::validate;
using namespace napkin::test::reports;

QString pointerOf(const QString& error) { return error.section(QStringLiteral(": "), 0, 0); }

json loadSchema()
{
    QFile f(QStringLiteral(NAPKIN_DOCS_DIR "/plan.schema.json")); // the published schema, one copy
    if (!f.open(QIODevice::ReadOnly))
        return json();
    return json::parse(f.readAll().toStdString(), nullptr, false);
}

// What the report prints: large numbers with 4 significant digits, integers with thousands separators.
// Numbers as the issue asks them written, spelled out here independently of core::humanNumber:
// "6.3e24 FLOPs" (3 significant digits, no '+' in the exponent), "52.6 K GPU-hours".
QString flopsHuman(double v)
{
    QString t = QString::number(v, 'g', 3);
    t.replace(QStringLiteral("e+"), QStringLiteral("e"));
    return t + QStringLiteral(" FLOPs");
}
QString hoursHuman(double v)
{
    const double scales[] = {1e12, 1e9, 1e6, 1e3};
    const char* units[] = {"T", "B", "M", "K"};
    for (int i = 0; i < 4; ++i)
        if (v >= scales[i])
            return QString::number(v / scales[i], 'g', 3) + QLatin1Char(' ') + QLatin1String(units[i]) +
                   QStringLiteral(" GPU-hours");
    return QString::number(v, 'g', 3) + QStringLiteral(" GPU-hours");
}
QString intText(double v) { return QLocale(QLocale::English).toString(qlonglong(std::llround(v))); }

struct HtmlFacts {
    QString error; // XML error, empty when well-formed
    int tables = 0;
    int svgs = 0;
    QString ledgerTotal; // the "Total" row of the table under "Memory per GPU"
    QStringList h2;
};

HtmlFacts readHtml(const QByteArray& html)
{
    HtmlFacts f;
    QXmlStreamReader xml(html);
    QString section;
    QStringList cells;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("table")) {
                ++f.tables;
            } else if (name == QLatin1String("svg")) {
                ++f.svgs;
            } else if (name == QLatin1String("h2")) {
                section = xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
                f.h2 << section;
            } else if (name == QLatin1String("tr")) {
                cells.clear();
            } else if (name == QLatin1String("td") || name == QLatin1String("th")) {
                cells << xml.readElementText(QXmlStreamReader::IncludeChildElements).trimmed();
            }
        } else if (xml.isEndElement() && xml.name() == QLatin1String("tr")) {
            if (section == QLatin1String("Memory per GPU") && cells.size() >= 2 && cells[0] == QLatin1String("Total") &&
                f.ledgerTotal.isEmpty())
                f.ledgerTotal = cells[1];
        }
    }
    if (xml.hasError())
        f.error = QStringLiteral("line %1 column %2: %3")
                      .arg(xml.lineNumber())
                      .arg(xml.columnNumber())
                      .arg(xml.errorString());
    return f;
}

// section.name -> row of fields after "section,name" (no quoted fields occur in these rows).
QMap<QString, QStringList> readCsv(const QByteArray& csv, QStringList* header)
{
    QMap<QString, QStringList> rows;
    const auto lines = QString::fromUtf8(csv).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    for (int i = 0; i < lines.size(); ++i) {
        const QStringList f = lines[i].split(QLatin1Char(','));
        if (i == 0) {
            if (header)
                *header = f;
            continue;
        }
        if (f.size() >= 3 && !f[0].startsWith(QLatin1String("roofline")))
            rows.insert(f[0] + QLatin1Char('.') + f[1], f.mid(2));
    }
    return rows;
}

// Both charts draw axes or lines to within a few percent of the right edge of their canvas.
bool inkOnTheRight(const QImage& image)
{
    for (int x = image.width() * 85 / 100; x < image.width(); ++x)
        for (int y = 0; y < image.height(); ++y)
            if (qGray(image.pixel(x, y)) < 160)
                return true;
    return false;
}

// H100 SXM dense peaks (spec sheet, no 2:4 sparsity) as the seeds use them.
constexpr double kH100Bf16 = 989.5e12;
constexpr double kH100Fp32 = 67e12;

// Llama 2 7B counted from its architecture: 32 layers of d = 4096, SwiGLU ffn 11008, vocab 32000,
// untied embeddings; per layer 4d² (attention) + 3·d·ffn (MLP) + 2d (RMSNorms), plus the final norm.
double llama2_7bParams()
{
    const double d = 4096, f = 11008, V = 32000, L = 32;
    return L * (4 * d * d + 3 * d * f + 2 * d) + 2 * V * d + d;
}

} // namespace

class TestReport : public QObject {
    Q_OBJECT
public:
    static void initMain()
    {
        if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    }

private:
    json m_schema;

    // One row per fixed scenario; the expected texts are computed here from the seeds' formulas.
    void scenarioRows()
    {
        QTest::addColumn<QByteArray>("user");      // the scenario's own keys (JSON)
        QTest::addColumn<double>("params");        // P
        QTest::addColumn<QString>("flopsText");    // training FLOPs as printed
        QTest::addColumn<QString>("daysText");     // days with one decimal
        QTest::addColumn<QString>("gpuHoursText"); // GPU-hours as printed
        QTest::addColumn<double>("weightsBytes");  // per GPU (ZeRO < 3: unsharded)

        auto add = [](const char* tag, const json& user, double P, double flops, double gpus, double peak,
                      double bytesPerWeight) {
            const double seconds = flops / (gpus * peak * 0.5); // MFU 0.5, the default
            QTest::newRow(tag) << QByteArray::fromStdString(user.dump()) << P
                               << flopsHuman(flops)
                               // The report prints days with one decimal, and small values (the toy
                               // model's seconds) in 4 significant digits instead of a rounded 0.
                               << (seconds / 86400 >= 0.1 ? QString::number(seconds / 86400, 'f', 1)
                                                          : QString::number(seconds / 86400, 'g', 4))
                               << hoursHuman(seconds * gpus / 3600) << P * bytesPerWeight;
        };
        // Default: Llama 2 7B, 2T tokens, 64 H100, bf16-mixed; PaLM convention 6N + 12·L·H·Q·s.
        const double P7 = llama2_7bParams();
        add("default", json::object(), P7, (6 * P7 + 12.0 * 32 * 32 * 128 * 4096) * 2e12, 64, kH100Bf16, 2);
        // 70B on 15T tokens on 1,024 H100: 6·70e9·15e12 = 6.3e24 FLOPs, 143.9 days at MFU 0.5.
        add("70b-15t-1024-h100",
            json{{"model", {{"params", 70e9}}},
                 {"training", {{"tokens", 15e12}}},
                 {"cluster", {{"gpus", 1024}}},
                 {"flops", {{"convention", "6PT"}}}},
            70e9, 6 * 70e9 * 15e12, 1024, kH100Bf16, 2);
        // The 7B ledger on one GPU, bf16-mixed: 14 GB weights, 14 GB gradients, 56 GB Adam states.
        add("7b-ledger",
            json{{"model", {{"params", 7e9}}}, {"cluster", {{"gpus", 1}}}, {"precision", {{"plan", "bf16-mixed"}}}},
            7e9, 6 * 7e9 * 2e12, 1, kH100Bf16, 2);
        // The toy deep linear model: D²·L + D = 4·4·2 + 4 = 36 parameters in fp32.
        add("toy-model",
            json{{"model", {{"kind", "mlp"}, {"width", 4}, {"layers", 2}, {"head", true}}},
                 {"training", {{"micro_batch", 2}, {"global_batch", 2}}},
                 {"precision", {{"plan", "fp32"}}},
                 {"optimizer", {{"name", "adagrad"}}},
                 {"cluster", {{"gpus", 1}}}},
            36, 6 * 36 * 2e12, 1, kH100Fp32, 4);
    }

private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("NapkinTest"));
        m_schema = loadSchema();
        QVERIFY2(m_schema.is_object(), "docs/plan.schema.json is missing or not JSON");
    }

    // The validator itself: accepts what it should, rejects what it should, names the place.
    void validatorBasics()
    {
        const json s = json::parse(R"({"type": "object", "required": ["a", "b"], "properties": {
            "a": {"type": "integer", "minimum": 1},
            "b": {"type": "array", "items": {"type": "object", "required": ["k"],
                                             "properties": {"k": {"type": "string", "enum": ["x", "y"]}}}},
            "c/d": {"type": ["string", "null"]}}})");
        QCOMPARE(validate(s, json::parse(R"({"a": 2, "b": [{"k": "x"}, {"k": "y"}]})")), QString());
        QCOMPARE(validate(s, json::parse(R"({"a": 2.0, "b": []})")), QString()); // 2.0 is an integer
        QCOMPARE(pointerOf(validate(s, json::parse(R"([1])"))), QStringLiteral("(root)"));
        QCOMPARE(pointerOf(validate(s, json::parse(R"({"b": []})"))), QStringLiteral("/a"));
        QCOMPARE(pointerOf(validate(s, json::parse(R"({"a": 1.5, "b": []})"))), QStringLiteral("/a"));
        QCOMPARE(pointerOf(validate(s, json::parse(R"({"a": 0, "b": []})"))), QStringLiteral("/a"));
        QCOMPARE(pointerOf(validate(s, json::parse(R"({"a": 1, "b": [{"k": "x"}, {"k": "z"}]})"))),
                 QStringLiteral("/b/1/k"));
        QCOMPARE(pointerOf(validate(s, json::parse(R"({"a": 1, "b": [{}]})"))), QStringLiteral("/b/0/k"));
        QCOMPARE(pointerOf(validate(s, json::parse(R"({"a": 1, "b": [], "c/d": 3})"))), QStringLiteral("/c~1d"));
        QVERIFY(validate(json::parse(R"({"type": "object", "additionalProperties": false})"), json::object())
                    .contains(QLatin1String("unsupported schema keyword")));
    }

    // The schema file covers what docs/plan-schema.md documents and nothing outside the keyword set.
    void schemaShape()
    {
        const json& props = m_schema["properties"];
        QVERIFY(props["schema"]["enum"] == json::array({"napkin.plan/1"}));
        const std::vector<std::string> top{"schema",       "scenario",    "scenario_name_given",
                                           "derived_name", "model",       "params",
                                           "finetune",     "memory",      "compute",
                                           "time",         "cost",        "hardware",
                                           "roofline",     "derivations", "warnings"};
        QVERIFY(m_schema["required"].get<std::vector<std::string>>() == top);
        QVERIFY(props["roofline"]["properties"]["ops"]["type"] == "array");
        QVERIFY(props["roofline"]["properties"]["ops"]["items"]["type"] == "object");
        QVERIFY(props["derivations"]["items"]["type"] == "object");
        QVERIFY(props["warnings"]["items"]["type"] == "object");
        QVERIFY(props["memory"]["properties"]["per_gpu"]["properties"]["total"]["minimum"] == 0);
        QVERIFY(!props["memory"]["properties"]["headroom"].contains("minimum")); // negative when short
        // Every documented section is an object with a required list covering all its properties.
        for (const char* section : {"params", "finetune", "memory", "compute", "time", "cost", "hardware"}) {
            const json& s = props[section];
            QVERIFY2(s["type"] == "object", section);
            // Present in the predicted step-time mode only: time.breakdown, breakdown_at_peak and
            // mfu_ceiling, compute.executed_flops_per_step.
            const std::string_view sec = section;
            // hardware.power_limit_watts and clock_factor: only with cluster.power_limit below the TDP.
            const std::size_t optional = sec == "time" ? 3 : (sec == "compute" ? 1 : (sec == "hardware" ? 2 : 0));
            QVERIFY2(s["required"].size() + optional == s["properties"].size(), section);
        }
    }

    void pdfReport_data() { scenarioRows(); }
    void pdfReport()
    {
        QFETCH(QByteArray, user);
        QFETCH(QString, flopsText);
        QFETCH(QString, daysText);
        QFETCH(QString, gpuHoursText);
        QFETCH(double, weightsBytes);
        const report::Input in = inputOf(json::parse(user.toStdString()));
        const core::Plan plan = corePlan(in.document);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());

        QString error;
        const QByteArray pdf = report::renderReport(in, report::Format::Pdf, report::Options{}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QVERIFY(pdf.startsWith("%PDF"));
        const QString a4 = dir.filePath(QStringLiteral("report-a4.pdf"));
        QVERIFY(writeAll(a4, pdf));
        report::Options letterOptions;
        letterOptions.page = report::PageSize::Letter;
        const QString letter = dir.filePath(QStringLiteral("report-letter.pdf"));
        QCOMPARE(report::writeReport(in, report::Format::Pdf, letter, letterOptions), QString());
        QVERIFY(readAll(letter).startsWith("%PDF"));

        if (tool("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed: cannot read the PDF's text");
        const QString raw = runTool(tool("pdftotext"), {a4, QStringLiteral("-")});
        QVERIFY2(!raw.isEmpty(), "pdftotext failed or found no text");
        const QString text = squeeze(raw);
        auto expect = [&](const QString& needle) {
            QVERIFY2(text.contains(squeeze(needle)), qPrintable(QStringLiteral("PDF text lacks \"%1\"").arg(needle)));
        };
        for (const char* title : {"Memory per GPU", "Compute, time and cost", "Roofline of one layer", "Derivations",
                                  "What would change the answer", "The plan", "Warnings"})
            expect(QLatin1String(title));
        expect(flopsText);                                // training FLOPs
        expect(daysText + QStringLiteral(" days"));       // days, one decimal
        expect(gpuHoursText);                             // GPU-hours
        expect(qs(core::formatBytes(weightsBytes)));      // weights per GPU
        expect(qs(core::formatBytes(plan.memory.total))); // total per GPU
        expect(qs(plan.title()));                         // the title

        // Page 1 is the executive summary by itself (issue 20): the verdict, the days and GPU-hours,
        // the risk and the accuracy; the body starts on page 2.
        // (Below 0.1 days the summary writes 3 significant digits, as people do: "0.000149 days".)
        const QString summaryDays =
            daysText.toDouble() >= 0.1 ? daysText : QString::number(daysText.toDouble(), 'g', 3);
        const QString page1 =
            squeeze(runTool(tool("pdftotext"), {QStringLiteral("-f"), QStringLiteral("1"), QStringLiteral("-l"),
                                                QStringLiteral("1"), a4, QStringLiteral("-")}));
        for (const QString& needle :
             {QStringLiteral("Summary"), QStringLiteral("Verdict"), summaryDays + QStringLiteral(" days"), gpuHoursText,
              QStringLiteral("Main risk"), QStringLiteral("Accuracy of the time"), QStringLiteral("Layout"),
              plan.memory.fits ? QStringLiteral("Fits:") : QStringLiteral("Does not fit:")})
            QVERIFY2(page1.contains(squeeze(needle)), qPrintable(QStringLiteral("page 1 lacks \"%1\"").arg(needle)));
        QVERIFY2(!page1.contains(squeeze(QStringLiteral("Roofline of one layer"))), "page 1 is not the summary alone");
        // A section's heading and caption share a page with its chart (issue 20: "Roofline of one layer"
        // and its caption closed page 3, the chart opened page 4).
        const QStringList pages = pageTexts(a4);
        const auto pageOf = [&](const QString& needle) { return napkin::test::reports::pageOf(pages, needle); };
        for (const auto& [caption, chart] :
             {std::pair{QStringLiteral("below the ridge an op waits on memory"),
                        QStringLiteral("Arithmetic intensity (FLOP/byte)")},
              std::pair{QStringLiteral("the ledger's total adds the caching allocator's reserve"),
                        QStringLiteral("fraction of one optimizer step")}}) {
            if (pageOf(caption) == 0 && caption.startsWith(QLatin1String("the ledger")))
                continue; // a plan without a memory timeline
            QVERIFY2(pageOf(caption) > 0, qPrintable(caption));
            QVERIFY2(pageOf(caption) == pageOf(chart), qPrintable(QStringLiteral("\"%1\" on page %2, its chart on %3")
                                                                      .arg(caption)
                                                                      .arg(pageOf(caption))
                                                                      .arg(pageOf(chart))));
        }
        // Sources are cited by number; their URLs are printed once, in the appendix at the end.
        const qsizetype appendix = text.lastIndexOf(QStringLiteral("Sources[1]"));
        QVERIFY2(appendix > 0, "no Sources appendix");
        QVERIFY2(text.indexOf(QStringLiteral("http")) > appendix, "a URL in the body, before the Sources appendix");
        QVERIFY(text.contains(QStringLiteral("specsheet[1]"))); // "GPU figures: spec sheet [1]"
        // Assumed MFU (the default mode): said so, never "predicted".
        expect(QStringLiteral("MFU assumed 0.50"));
        QVERIFY(!text.contains(squeeze(QStringLiteral("MFU predicted"))));

        if (tool("pdfinfo").isEmpty())
            QSKIP("pdfinfo (poppler-utils) is not installed: cannot check the page size");
        const QString a4Size = pageSizeLine(a4), letterSize = pageSizeLine(letter);
        QVERIFY2(a4Size.contains(QLatin1String("(A4)")), qPrintable(a4Size));
        QVERIFY2(letterSize.contains(QLatin1String("(letter)"), Qt::CaseInsensitive), qPrintable(letterSize));
    }

    void htmlReport_data() { scenarioRows(); }
    void htmlReport()
    {
        QFETCH(QByteArray, user);
        QFETCH(QString, flopsText);
        QFETCH(QString, daysText);
        const report::Input in = inputOf(json::parse(user.toStdString()));
        const core::Plan plan = corePlan(in.document);
        QString error;
        const QByteArray html = report::renderReport(in, report::Format::Html, report::Options{}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const HtmlFacts f = readHtml(html);
        QVERIFY2(f.error.isEmpty(), qPrintable(f.error));
        QVERIFY2(f.tables >= 5, qPrintable(QString::number(f.tables)));
        QCOMPARE(f.svgs, 3); // ledger, memory through the step and roofline, inline
        QCOMPARE(f.ledgerTotal, qs(core::formatBytes(plan.memory.total)));
        for (const char* title : {"Memory per GPU", "Compute, time and cost", "Roofline of one layer", "Derivations",
                                  "What would change the answer"})
            QVERIFY2(f.h2.contains(QLatin1String(title)), title);
        const QString text = QString::fromUtf8(html);
        QVERIFY(text.contains(flopsText));
        QVERIFY(text.contains(daysText + QStringLiteral(" days")));
        const QRegularExpression nonFinite(QStringLiteral("\\b(nan|inf)\\b"),
                                           QRegularExpression::CaseInsensitiveOption);
        QVERIFY2(!nonFinite.match(text).hasMatch(), qPrintable(nonFinite.match(text).captured()));

        // GiB: the same total in binary units.
        report::Options gib;
        gib.gib = true;
        const HtmlFacts g = readHtml(report::renderReport(in, report::Format::Html, gib, &error));
        QVERIFY2(g.error.isEmpty(), qPrintable(g.error));
        QCOMPARE(g.ledgerTotal, QStringLiteral("%1 GiB").arg(plan.memory.total / 1073741824.0, 0, 'f', 2));
    }

    void csvReport_data() { scenarioRows(); }
    void csvReport()
    {
        QFETCH(QByteArray, user);
        QFETCH(double, params);
        const report::Input in = inputOf(json::parse(user.toStdString()));
        const core::Plan plan = corePlan(in.document);
        QString error;
        const QByteArray csv = report::renderReport(in, report::Format::Csv, report::Options{}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        QStringList header;
        const auto rows = readCsv(csv, &header);
        QCOMPARE(header, (QStringList{QStringLiteral("section"), QStringLiteral("name"), QStringLiteral("value"),
                                      QStringLiteral("unit")}));
        auto value = [&](const char* key) {
            const auto it = rows.constFind(QLatin1String(key));
            if (it == rows.constEnd())
                return std::nan("");
            bool ok = false;
            const double v = it->value(0).toDouble(&ok);
            return ok ? v : std::nan("");
        };
        const auto& m = plan.memory;
        const std::vector<std::pair<const char*, double>> exact{{"memory.weights", m.weights},
                                                                {"memory.gradients", m.gradients},
                                                                {"memory.master_weights", m.masterWeights},
                                                                {"memory.optimizer_states", m.optimizerStates},
                                                                {"memory.activations", m.activations},
                                                                {"memory.temporaries", m.temporaries},
                                                                {"memory.overhead", m.overhead},
                                                                {"memory.total", m.total},
                                                                {"memory.capacity", m.capacity},
                                                                {"params.total", plan.params.total},
                                                                {"compute.training_flops", plan.compute.trainingFlops},
                                                                {"time.days", plan.time.days}};
        for (const auto& [key, expected] : exact)
            QVERIFY2(value(key) == expected, // exactly: %.17g round-trips a double
                     qPrintable(QStringLiteral("%1: CSV %2, plan %3")
                                    .arg(QLatin1String(key))
                                    .arg(value(key), 0, 'g', 17)
                                    .arg(expected, 0, 'g', 17)));
        for (auto it = rows.constBegin(); it != rows.constEnd(); ++it)
            if (it.key().startsWith(QLatin1String("memory.")))
                QCOMPARE(it->value(1), QStringLiteral("bytes"));
        QCOMPARE(value("params.total"), params); // and equal to the hand count
        // The inputs come first (issue 20): what the plan is a plan of.
        const json doc = in.document;
        QCOMPARE(value("input.gpus"), doc["cluster"]["gpus"].get<double>());
        QCOMPARE(value("input.tokens"), doc["training"]["tokens"].get<double>());
        QCOMPARE(value("input.micro_batch"), doc["training"]["micro_batch"].get<double>());
        QCOMPARE(rows.value(QStringLiteral("input.gpu")).value(0), qs(doc["cluster"]["gpu"].get<std::string>()));
        QCOMPARE(rows.value(QStringLiteral("input.step_time_mode")).value(0), QStringLiteral("mfu"));
        QCOMPARE(value("input.mfu"), 0.5);
        QCOMPARE(rows.value(QStringLiteral("input.recompute")).value(0), QStringLiteral("none"));
        QCOMPARE(rows.value(QStringLiteral("input.pipeline_schedule")).value(0), QStringLiteral("1f1b"));
        QVERIFY(!rows.contains(QStringLiteral("input.etp"))); // a dense model has no expert layout
        QVERIFY(QString::fromUtf8(csv).indexOf(QLatin1String("\ninput,")) <
                QString::fromUtf8(csv).indexOf(QLatin1String("\nparams,")));
    }

    void predictedPlanValidates()
    {
        // The predicted step-time mode adds time.breakdown; a pipeline adds one per_stage row per stage.
        const json user = {{"step_time", {{"mode", "predicted"}}}, {"parallel", {{"tp", 2}, {"pp", 4}}}};
        const report::Input in = inputOf(user);
        const json plan = core::planToJson(corePlan(in.document));
        QCOMPARE(validate(m_schema, plan), QString());
        QCOMPARE(plan["time"]["mode"].get<std::string>(), std::string("predicted"));
        QCOMPARE(plan["memory"]["per_stage"].size(), std::size_t(4));
        QVERIFY(plan["time"]["breakdown"]["step"].get<double>() > 0);
        // A breakdown without its links fails the schema: the validator is not vacuous here.
        json broken = plan;
        broken["time"]["breakdown"].erase("links");
        QVERIFY(!validate(m_schema, broken).isEmpty());
    }

    void jsonReport_data() { scenarioRows(); }
    void jsonReport()
    {
        QFETCH(QByteArray, user);
        QFETCH(double, params);
        const report::Input in = inputOf(json::parse(user.toStdString()));
        QString error;
        const QByteArray bytes = report::renderReport(in, report::Format::Json, report::Options{}, &error);
        QVERIFY2(error.isEmpty(), qPrintable(error));
        const json plan = json::parse(bytes.toStdString(), nullptr, false);
        QVERIFY(plan.is_object());
        QCOMPARE(validate(m_schema, plan), QString());
        QCOMPARE(plan["params"]["total"].get<double>(), params);
        // The report's JSON is core's plan JSON, byte for byte.
        QCOMPARE(bytes.toStdString(), core::planToJson(corePlan(in.document)).dump(1) + "\n");

        // Broken copies fail, at the place that is broken.
        auto broken = [&](auto edit) {
            json copy = plan;
            edit(copy);
            return pointerOf(validate(m_schema, copy));
        };
        QCOMPARE(broken([](json& j) { j["memory"]["per_gpu"].erase("total"); }),
                 QStringLiteral("/memory/per_gpu/total"));
        QCOMPARE(broken([](json& j) { j["memory"]["per_gpu"]["total"] = "49 GB"; }),
                 QStringLiteral("/memory/per_gpu/total"));
        QCOMPARE(broken([](json& j) { j["memory"]["per_gpu"]["weights"] = -1.0; }),
                 QStringLiteral("/memory/per_gpu/weights"));
        QCOMPARE(broken([](json& j) { j["schema"] = "napkin.plan/2"; }), QStringLiteral("/schema"));
        QCOMPARE(broken([](json& j) { j.erase("warnings"); }), QStringLiteral("/warnings"));
        QCOMPARE(broken([](json& j) { j["compute"]["accumulation_steps"] = 1.5; }),
                 QStringLiteral("/compute/accumulation_steps"));
        QCOMPARE(broken([](json& j) { j["memory"]["fits"] = 1; }), QStringLiteral("/memory/fits"));
        QCOMPARE(broken([](json& j) { j["roofline"]["ops"][0]["pass"] = "sideways"; }),
                 QStringLiteral("/roofline/ops/0/pass"));
        QCOMPARE(broken([](json& j) { j["derivations"][1].erase("source"); }), QStringLiteral("/derivations/1/source"));
        QCOMPARE(broken([](json& j) {
                     j["warnings"] = json::array({json{{"code", "nope"}, {"message", "m"}}});
                 }),
                 QStringLiteral("/warnings/0/code"));
        QCOMPARE(broken([](json& j) { j["time"]["days"] = nullptr; }),
                 QStringLiteral("/time/days")); // a NaN dumps as null
    }

    void markdownReport_data() { scenarioRows(); }
    void markdownReport()
    {
        QFETCH(QByteArray, user);
        QFETCH(QString, flopsText);
        const report::Input in = inputOf(json::parse(user.toStdString()));
        const core::Plan plan = corePlan(in.document);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString md = dir.filePath(QStringLiteral("report.md"));
        QCOMPARE(report::writeReport(in, report::Format::Markdown, md, report::Options{}), QString());
        const QString ledger = dir.filePath(QStringLiteral("report-ledger.png"));
        const QString roofline = dir.filePath(QStringLiteral("report-roofline.png"));
        QVERIFY(QFileInfo::exists(md));
        const QImage li(ledger), ri(roofline);
        QVERIFY2(!li.isNull(), qPrintable(ledger));
        QVERIFY2(!ri.isNull(), qPrintable(roofline));
        // The report's chart sizes (900x260, 900x480) at device pixel ratio 2.
        QCOMPARE(li.size(), QSize(1800, 520));
        QCOMPARE(ri.size(), QSize(1800, 960));
        const QString text = QString::fromUtf8(readAll(md));
        QVERIFY(text.contains(QLatin1String("](report-ledger.png)")));
        QVERIFY(text.contains(QLatin1String("](report-roofline.png)")));
        QVERIFY(text.contains(QLatin1String("## What would change the answer")));
        QVERIFY(text.contains(qs(core::formatBytes(plan.memory.total))));
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), 3); // nothing else (no temporary files)
    }

    void charts_data()
    {
        QTest::addColumn<int>("chart");
        QTest::addColumn<QSize>("size");
        QTest::newRow("ledger 640x360") << int(report::Chart::Ledger) << QSize(640, 360);
        QTest::newRow("roofline 640x360") << int(report::Chart::Roofline) << QSize(640, 360);
        QTest::newRow("roofline 1200x700") << int(report::Chart::Roofline) << QSize(1200, 700);
        QTest::newRow("timeline 900x360") << int(report::Chart::Timeline) << QSize(900, 360);
        QTest::newRow("steptime 900x300") << int(report::Chart::StepTime) << QSize(900, 300);
        QTest::newRow("stages 900x360") << int(report::Chart::Stages) << QSize(900, 360);
    }
    void charts()
    {
        QFETCH(int, chart);
        QFETCH(QSize, size);
        const auto kind = report::Chart(chart);
        const report::Input in = inputOf(json::object());
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString png = dir.filePath(QStringLiteral("c.png")), svg = dir.filePath(QStringLiteral("c.svg")),
                      pdf = dir.filePath(QStringLiteral("c.pdf"));
        QCOMPARE(report::writeChart(in, kind, report::ChartFormat::Png, png, size), QString());
        QCOMPARE(report::writeChart(in, kind, report::ChartFormat::Svg, svg, size), QString());
        QCOMPARE(report::writeChart(in, kind, report::ChartFormat::Pdf, pdf, size), QString());

        // PNG: drawn at device pixel ratio 2 (pictureToPng's default scale), so twice the asked size.
        const QImage image(png);
        QVERIFY(!image.isNull());
        QCOMPARE(image.size(), size * 2);
        QVERIFY(inkOnTheRight(image)); // the PNG fills its canvas (the control for the vector checks below)

        QXmlStreamReader xml(readAll(svg));
        QVERIFY(xml.readNextStartElement());
        QCOMPARE(xml.name().toString(), QStringLiteral("svg"));
        QCOMPARE(xml.attributes().value(QLatin1String("viewBox")).toString(),
                 QStringLiteral("0 0 %1 %2").arg(size.width()).arg(size.height()));
        while (!xml.atEnd())
            xml.readNext();
        QVERIFY2(!xml.hasError(), qPrintable(xml.errorString()));

        QVERIFY(readAll(pdf).startsWith("%PDF"));
        if (!tool("pdfinfo").isEmpty()) {
            const QString line = pageSizeLine(pdf);
            QVERIFY2(line.contains(QStringLiteral("%1 x %2 pts").arg(size.width()).arg(size.height())),
                     qPrintable(line));
        }

        // The vector charts should fill their canvas as the PNG does. They do not: the chart QPicture is
        // recorded at the screen's 96 dpi and played back on QSvgGenerator's / the 72-dpi QPdfWriter's
        // resolution, so QPainter::drawPicture scales it by 72/96 and the chart covers only the top-left
        // 75 % (pictureToSvg and pictureToPdf, app/gui/chartexport.cpp).
        {
            QSvgRenderer renderer(readAll(svg));
            QVERIFY(renderer.isValid());
            QImage canvas(size, QImage::Format_ARGB32);
            canvas.fill(Qt::transparent);
            QPainter painter(&canvas);
            renderer.render(&painter);
            painter.end();
            // The chart paints a white background over its whole area: the far corner must be painted.
            QVERIFY(qAlpha(canvas.pixel(size.width() - 2, size.height() - 2)) == 255);
        }
        if (!tool("pdftoppm").isEmpty()) {
            const QString prefix = dir.filePath(QStringLiteral("c-page"));
            runTool(tool("pdftoppm"), {QStringLiteral("-r"), QStringLiteral("72"), QStringLiteral("-png"),
                                       QStringLiteral("-singlefile"), pdf, prefix});
            const QImage page(prefix + QStringLiteral(".png"));
            QVERIFY(!page.isNull());
            QCOMPARE(page.size(), size);
            QVERIFY(inkOnTheRight(page));
        }

        // Out of range: an error, no file.
        const QString tiny = dir.filePath(QStringLiteral("tiny.png"));
        QVERIFY(!report::writeChart(in, kind, report::ChartFormat::Png, tiny, QSize(100, 50)).isEmpty());
        QVERIFY(!QFileInfo::exists(tiny));
    }

    void comparison_data() { scenarioRows(); }
    void comparison()
    {
        QFETCH(QByteArray, user);
        const json base = json::parse(user.toStdString());
        json bf16 = base, fp8 = base, twice = base;
        bf16["precision"] = {{"plan", "bf16-mixed"}};
        fp8["precision"] = {{"plan", "fp8-mixed"}};
        twice["precision"] = {{"plan", "bf16-mixed"}};
        const int gpus = mergedDocument(base)["cluster"]["gpus"].get<int>();
        twice["cluster"]["gpus"] = 2 * gpus;
        const std::vector<report::Input> inputs{inputOf(bf16, QStringLiteral("bf16-mixed")),
                                                inputOf(fp8, QStringLiteral("fp8-mixed")),
                                                inputOf(twice, QStringLiteral("2x GPUs"))};
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString pdf = dir.filePath(QStringLiteral("c.pdf")), html = dir.filePath(QStringLiteral("c.html")),
                      csv = dir.filePath(QStringLiteral("c.csv")), js = dir.filePath(QStringLiteral("c.json"));
        QCOMPARE(report::writeComparison(inputs, report::Format::Pdf, pdf, report::Options{}), QString());
        QCOMPARE(report::writeComparison(inputs, report::Format::Html, html, report::Options{}), QString());
        QCOMPARE(report::writeComparison(inputs, report::Format::Csv, csv, report::Options{}), QString());
        QCOMPARE(report::writeComparison(inputs, report::Format::Json, js, report::Options{}), QString());

        // CSV: one value column per scenario.
        QStringList header;
        const auto rows = readCsv(readAll(csv), &header);
        QCOMPARE(header, (QStringList{QStringLiteral("section"), QStringLiteral("name"), QStringLiteral("bf16-mixed"),
                                      QStringLiteral("fp8-mixed"), QStringLiteral("2x GPUs"), QStringLiteral("unit")}));
        QVERIFY(rows.size() >= 10);
        for (auto it = rows.constBegin(); it != rows.constEnd(); ++it)
            QVERIFY2(it->size() == 4, qPrintable(it.key()));
        auto col = [&](const char* key, int i) { return rows.value(QLatin1String(key)).value(i).toDouble(); };
        // Time = F / (G · C · MFU): doubling G at fixed MFU halves the days; FLOPs and GPU-hours stay.
        const double days = col("time.days", 0);
        QVERIFY(days > 0);
        QVERIFY2(std::fabs(col("time.days", 2) / days - 0.5) < 1e-12,
                 qPrintable(QString::number(col("time.days", 2) / days, 'g', 17)));
        QVERIFY(std::fabs(col("time.gpu_hours", 2) / col("time.gpu_hours", 0) - 1) < 1e-12);
        QCOMPARE(col("compute.training_flops", 1), col("compute.training_flops", 0));
        QCOMPARE(col("compute.training_flops", 2), col("compute.training_flops", 0));
        // fp8 matmuls: H100's dense fp8 peak is twice its bf16 peak (1979 vs 989.5 TFLOP/s); the toy
        // model's fp32 plan is replaced by bf16-mixed here, so the same holds for it.
        QVERIFY2(std::fabs(col("time.days", 1) / days - 0.5) < 1e-12,
                 qPrintable(QString::number(col("time.days", 1) / days, 'g', 17)));
        // The CSV equals each scenario's own plan.
        QCOMPARE(col("memory.total", 0), corePlan(inputs[0].document).memory.total);
        QCOMPARE(col("memory.total", 1), corePlan(inputs[1].document).memory.total);
        QCOMPARE(col("memory.total", 2), corePlan(inputs[2].document).memory.total);

        // JSON: napkin.compare/1 with three valid plans, labelled.
        const json j = json::parse(readAll(js).toStdString(), nullptr, false);
        QCOMPARE(j.value("schema", std::string()), std::string("napkin.compare/1"));
        QCOMPARE(j["plans"].size(), std::size_t(3));
        const char* labels[] = {"bf16-mixed", "fp8-mixed", "2x GPUs"};
        for (std::size_t i = 0; i < 3; ++i) {
            QCOMPARE(validate(m_schema, j["plans"][i]), QString());
            QCOMPARE(j["plans"][i].value("label", std::string()), std::string(labels[i]));
        }

        // HTML: well-formed, a side-by-side table and one ledger chart per scenario.
        const HtmlFacts f = readHtml(readAll(html));
        QVERIFY2(f.error.isEmpty(), qPrintable(f.error));
        QVERIFY(f.tables >= 1);
        QCOMPARE(f.svgs, 3);
        QVERIFY(f.h2.contains(QLatin1String("Side by side")));
        QVERIFY(f.h2.contains(QLatin1String("2x GPUs")));

        // PDF
        QVERIFY(readAll(pdf).startsWith("%PDF"));
        if (tool("pdftotext").isEmpty())
            QSKIP("pdftotext (poppler-utils) is not installed: cannot read the comparison PDF's text");
        const QString text = squeeze(runTool(tool("pdftotext"), {pdf, QStringLiteral("-")}));
        for (const char* needle : {"Side by side", "bf16-mixed", "fp8-mixed", "2x GPUs", "Total per GPU", "Days"})
            QVERIFY2(text.contains(squeeze(QLatin1String(needle))), needle);
        QVERIFY(text.contains(squeeze(QString::number(days, 'g', 4))) || text.contains(squeeze(intText(days))));
    }

    void atomicity_data()
    {
        QTest::addColumn<int>("format");
        QTest::addColumn<QString>("name");
        QTest::newRow("pdf") << int(report::Format::Pdf) << QStringLiteral("r.pdf");
        QTest::newRow("html") << int(report::Format::Html) << QStringLiteral("r.html");
        QTest::newRow("md") << int(report::Format::Markdown) << QStringLiteral("r.md");
        QTest::newRow("csv") << int(report::Format::Csv) << QStringLiteral("r.csv");
        QTest::newRow("json") << int(report::Format::Json) << QStringLiteral("r.json");
    }
    void atomicity()
    {
        QFETCH(int, format);
        QFETCH(QString, name);
        const auto f = report::Format(format);
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const report::Input good = inputOf(json::object());

        // A directory that does not exist: an error that names the path, nothing created.
        const QString missingDir = dir.filePath(QStringLiteral("no/such/dir"));
        const QString missing = missingDir + QLatin1Char('/') + name;
        const QString why = report::writeReport(good, f, missing, report::Options{});
        QVERIFY(!why.isEmpty());
        // Markdown writes its charts first, so its message names the first chart beside OUT.
        QVERIFY2(why.contains(missing), qPrintable(why));
        QVERIFY(!QFileInfo::exists(missing));
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("no"))));
        const QString chartWhy = report::writeChart(good, report::Chart::Ledger, report::ChartFormat::Png,
                                                    missingDir + QStringLiteral("/c.png"), QSize(640, 360));
        QVERIFY2(chartWhy.contains(missingDir + QStringLiteral("/c.png")), qPrintable(chartWhy));
        if (f != report::Format::Markdown) {
            const QString cmpWhy = report::writeComparison({good, good}, f, missing, report::Options{});
            QVERIFY2(cmpWhy.contains(missing), qPrintable(cmpWhy));
        }
        QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("no"))));

        // Over an existing file with an invalid scenario (cluster.gpus 0): an error, the file unchanged.
        const QString existing = dir.filePath(name);
        const QByteArray before("previous contents\n");
        QVERIFY(writeAll(existing, before));
        const QString ledgerPng = dir.filePath(QStringLiteral("r-ledger.png"));
        if (f == report::Format::Markdown)
            QVERIFY(writeAll(ledgerPng, before));
        const report::Input bad = inputOf(json{{"cluster", {{"gpus", 0}}}});
        const QString badWhy = report::writeReport(bad, f, existing, report::Options{});
        QVERIFY(!badWhy.isEmpty());
        QVERIFY2(badWhy.contains(QLatin1String("gpus")), qPrintable(badWhy));
        QCOMPARE(readAll(existing), before);
        if (f == report::Format::Markdown) {
            QCOMPARE(readAll(ledgerPng), before);
            QVERIFY(!QFileInfo::exists(dir.filePath(QStringLiteral("r-roofline.png"))));
        } else {
            QVERIFY(!report::writeComparison({good, bad}, f, existing, report::Options{}).isEmpty());
            QCOMPARE(readAll(existing), before);
        }
        QString renderWhy;
        QVERIFY(report::renderReport(bad, f, report::Options{}, &renderWhy).isEmpty());
        QVERIFY(!renderWhy.isEmpty());

        // A valid scenario replaces it, and leaves no temporary file behind.
        QCOMPARE(report::writeReport(good, f, existing, report::Options{}), QString());
        QVERIFY(readAll(existing) != before);
        const int expectedFiles = f == report::Format::Markdown ? 3 : 1;
        QCOMPARE(QDir(dir.path()).entryList(QDir::Files).size(), expectedFiles);
    }
};

QTEST_MAIN(TestReport)
#include "tst_report.moc"
