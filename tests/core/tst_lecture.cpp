// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Lecture walkthroughs (napkin.lecture/1): the built-in CS336 walkthrough loads, every step's claims
// match the engine, the seeds' numbers hold at each step's scenario, and hostile files are refused
// with errors naming the field.
#include "testsupport.h"

#include "activations.h"
#include "lecture.h"

using namespace napkin;

namespace {

const core::Lecture& builtin()
{
    static const core::Lecture l = [] {
        core::Errors errors;
        auto lecture = core::builtinLecture("cs336-lecture2", errors);
        if (!errors.empty())
            qWarning("%s", core::describe(errors.front()).c_str());
        return lecture.value_or(core::Lecture{});
    }();
    return l;
}

const core::LectureStep* stepById(const std::string& id)
{
    for (const auto& s : builtin().steps)
        if (s.id == id)
            return &s;
    return nullptr;
}

// A step's value of a quantity, evaluated from its resolved scenario.
double valueAt(const std::string& stepId, const std::string& quantity)
{
    const auto* step = stepById(stepId);
    if (!step)
        return std::nan("");
    core::Errors errors;
    const auto sc = core::parseScenario(step->document, core::builtinCatalog(), errors);
    if (!errors.empty())
        return std::nan("");
    std::string why;
    const auto v = core::lectureQuantity(*step, sc, core::estimate(sc), quantity, &why);
    if (!v)
        qWarning("%s: %s", quantity.c_str(), why.c_str());
    return v.value_or(std::nan(""));
}

QString firstField(const core::Errors& errors)
{
    return errors.empty() ? QString() : QString::fromStdString(errors.front().field);
}

} // namespace

class TestLecture : public QObject {
    Q_OBJECT
private slots:
    void builtinLoads()
    {
        core::Errors errors;
        const auto lecture = core::builtinLecture("cs336-lecture2", errors);
        QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str());
        QVERIFY(lecture);
        QCOMPARE(lecture->steps.size(), std::size_t(13));
        QCOMPARE(lecture->steps.front().id, std::string("tensor-bytes"));
        QCOMPARE(lecture->steps.back().focus, core::LectureFocus::Checkpoint);
        for (const auto& s : lecture->steps)
            QVERIFY2(s.document.is_object() && !s.expect.empty(), s.id.c_str());
        QVERIFY(!core::builtinLecture("no-such-lecture", errors));
        QCOMPARE(firstField(errors), QStringLiteral("lecture"));
    }

    // Every claim of the built-in walkthrough, against the engine at that step's scenario.
    void everyExpectMatchesTheEngine_data()
    {
        QTest::addColumn<int>("step");
        QTest::addColumn<int>("claim");
        const auto& steps = builtin().steps;
        QVERIFY(!steps.empty());
        for (int i = 0; i < int(steps.size()); ++i)
            for (int j = 0; j < int(steps[std::size_t(i)].expect.size()); ++j)
                QTest::addRow("%s/%s", steps[std::size_t(i)].id.c_str(),
                              steps[std::size_t(i)].expect[std::size_t(j)].quantity.c_str())
                    << i << j;
    }
    void everyExpectMatchesTheEngine()
    {
        QFETCH(int, step);
        QFETCH(int, claim);
        const auto& s = builtin().steps[std::size_t(step)];
        core::Errors errors;
        const auto sc = core::parseScenario(s.document, core::builtinCatalog(), errors);
        QVERIFY(errors.empty());
        const auto checks = core::checkExpectations(s, sc, core::estimate(sc));
        const auto& c = checks[std::size_t(claim)];
        QVERIFY2(c.actual, c.why.c_str());
        QVERIFY2(c.ok, qPrintable(QStringLiteral("engine %1, claimed %2 ± %3")
                                      .arg(*c.actual, 0, 'g', 12)
                                      .arg(c.expect.value, 0, 'g', 12)
                                      .arg(c.expect.tolerance)));
    }

    // The seeds' numbers, typed in from the lecture (tests/data/golden.json CS-1 .. CS-17), at the
    // scenario of the step that teaches them: independent of the claims in the walkthrough file.
    void seedsNumbersAtTheirSteps_data()
    {
        QTest::addColumn<QByteArray>("step");
        QTest::addColumn<QByteArray>("quantity");
        QTest::addColumn<double>("expected");
        QTest::addColumn<double>("tolerance");
        // clang-format off
        QTest::newRow("CS-15 elements") << QByteArray("tensor-bytes") << QByteArray("tensor.elements") << 131072.0 << 0.0;
        QTest::newRow("CS-15 fp32 bytes") << QByteArray("tensor-bytes") << QByteArray("tensor.bytes") << 524288.0 << 0.0;
        QTest::newRow("CS-15 bf16 bytes") << QByteArray("tensor-bytes") << QByteArray("tensor.bytes.bf16") << 262144.0 << 0.0;
        QTest::newRow("CS-16 fp16 underflows 1e-8") << QByteArray("fp16-vs-bf16") << QByteArray("dtype.fp16.stored") << 0.0 << 0.0;
        QTest::newRow("1.001 is 1 in bf16") << QByteArray("bf16-rounding") << QByteArray("dtype.bf16.stored") << 1.0 << 0.0;
        QTest::newRow("CS-1 6PT") << QByteArray("matmul-flops") << QByteArray("compute.training_flops") << 6.3e24 << 1e-12;
        QTest::newRow("2mnk") << QByteArray("matmul-flops") << QByteArray("op.lecture-matmul.flops") << 2.0 * 16384 * 32768 * 8192 << 0.0;
        QTest::newRow("CS-2 days") << QByteArray("70b-15t-1024-h100") << QByteArray("time.days") << 143.9 << 1e-3;
        QTest::newRow("CS-3 40B") << QByteArray("largest-model-16") << QByteArray("fit.states_only.max_params") << 40e9 << 1e-3;
        QTest::newRow("CS-4 53B") << QByteArray("largest-model-12") << QByteArray("fit.states_only.max_params") << 53.3e9 << 1e-3;
        QTest::newRow("CS-5 weights 14 GB") << QByteArray("7b-ledger") << QByteArray("memory.per_gpu.weights") << 14e9 << 0.0;
        QTest::newRow("CS-5 grads 14 GB") << QByteArray("7b-ledger") << QByteArray("memory.per_gpu.gradients") << 14e9 << 0.0;
        QTest::newRow("CS-5 moments 56 GB") << QByteArray("7b-ledger") << QByteArray("memory.per_gpu.optimizer_states") << 56e9 << 0.0;
        QTest::newRow("CS-8 ridge") << QByteArray("roofline-gemm") << QByteArray("hardware.ridge") << 295.4 << 1e-3;
        QTest::newRow("CS-9 M=1") << QByteArray("roofline-gemm") << QByteArray("op.M=1.intensity") << 0.9995 << 1e-3;
        QTest::newRow("CS-9 M=128") << QByteArray("roofline-gemm") << QByteArray("op.M=128.intensity") << 120.47 << 1e-3;
        QTest::newRow("CS-9 M=1024") << QByteArray("roofline-gemm") << QByteArray("op.M=1024.intensity") << 682.67 << 1e-3;
        QTest::newRow("CS-10 ReLU") << QByteArray("roofline-elementwise") << QByteArray("op.relu.intensity") << 0.25 << 0.0;
        QTest::newRow("CS-11 GELU") << QByteArray("roofline-elementwise") << QByteArray("op.gelu.intensity") << 5.0 << 0.0;
        // Seeds (transcript): 8.8e12 FLOPs in 0.03 s is ~2.9e14 FLOP/s, "around 0.3" of 989.5 TFLOP/s;
        // 0.16 s in fp32 is ~5.5e13 FLOP/s against 67 TFLOP/s, "near 0.8".
        QTest::newRow("MFU bf16 ~0.3") << QByteArray("mfu-measured") << QByteArray("op.lecture-bf16.mfu") << 0.3 << 0.02;
        QTest::newRow("MFU fp32 ~0.8") << QByteArray("mfu-measured") << QByteArray("op.lecture-fp32.mfu") << 0.82 << 0.01;
        QTest::newRow("accumulation 1024/64") << QByteArray("gradient-accumulation") << QByteArray("compute.accumulation_steps") << 16.0 << 0.0;
        QTest::newRow("CS-17 best k = sqrt(64)") << QByteArray("checkpointing") << QByteArray("checkpoint.best_k") << 8.0 << 0.0;
        // clang-format on
    }
    void seedsNumbersAtTheirSteps()
    {
        QFETCH(QByteArray, step);
        QFETCH(QByteArray, quantity);
        QFETCH(double, expected);
        QFETCH(double, tolerance);
        const double got = valueAt(step.toStdString(), quantity.toStdString());
        if (tolerance == 0)
            QCOMPARE(got, expected);
        else
            NAPKIN_COMPARE_REL(got, expected, tolerance);
    }

    void sevenBStatesAre84GB()
    {
        const double states = valueAt("7b-ledger", "memory.per_gpu.weights") +
                              valueAt("7b-ledger", "memory.per_gpu.gradients") +
                              valueAt("7b-ledger", "memory.per_gpu.master_weights") +
                              valueAt("7b-ledger", "memory.per_gpu.optimizer_states");
        QCOMPARE(states, 84e9);
    }

    // Steps build on the previous one; "reset" starts again from the default scenario.
    void stepsChainAndReset()
    {
        const auto* flops = stepById("matmul-flops");
        const auto* days = stepById("70b-15t-1024-h100");
        const auto* ledger = stepById("7b-ledger");
        QVERIFY(flops && days && ledger);
        QCOMPARE(days->document["cluster"]["gpus"].get<int>(), 1024); // inherited
        QCOMPARE(days->document["model"]["params"].get<double>(), 70e9);
        QCOMPARE(ledger->document["training"]["tokens"], core::defaultScenarioJson()["training"]["tokens"]); // reset
        QCOMPARE(ledger->document["cluster"]["gpus"].get<int>(), 1);
    }

    // CS336 lecture 2: O(L/k + k), computed by hand.
    void checkpointCurveByHand_data()
    {
        QTest::addColumn<int>("layers");
        QTest::addColumn<double>("boundary");
        QTest::addColumn<double>("layer");
        QTest::addColumn<int>("k");
        QTest::addColumn<double>("bytesAtK");
        QTest::addColumn<int>("bestK");
        QTest::addColumn<double>("bestBytes");
        // ceil(16/1) + 1 = 17; best at k = 4: 4 + 4 = 8.
        QTest::newRow("L=16, k=1") << 16 << 1.0 << 1.0 << 1 << 17.0 << 4 << 8.0;
        QTest::newRow("L=16, k=16") << 16 << 1.0 << 1.0 << 16 << 17.0 << 4 << 8.0;
        // ceil(16/3) + 3 = 9.
        QTest::newRow("L=16, k=3") << 16 << 1.0 << 1.0 << 3 << 9.0 << 4 << 8.0;
        // 64 layers: 8 + 8 = 16 at k = 8; k = 7: 10 + 7 = 17.
        QTest::newRow("L=64, k=7") << 64 << 1.0 << 1.0 << 7 << 17.0 << 8 << 16.0;
        // A boundary 4x cheaper than a layer: 16/k · 1 + 4k, best at k = 2 (8 + 8 = 16; k = 3: 6 + 12).
        QTest::newRow("L=16, boundary 1, layer 4, k=3") << 16 << 1.0 << 4.0 << 3 << 18.0 << 2 << 16.0;
        // Ties go to the smallest k: L = 10 gives 7 at k = 2, 3, 4 and 5.
        QTest::newRow("L=10 ties") << 10 << 2.0 << 2.0 << 5 << 14.0 << 2 << 14.0;
    }
    void checkpointCurveByHand()
    {
        QFETCH(int, layers);
        QFETCH(double, boundary);
        QFETCH(double, layer);
        QFETCH(int, k);
        QFETCH(double, bytesAtK);
        QFETCH(int, bestK);
        QFETCH(double, bestBytes);
        const auto c = core::checkpointCurve(layers, boundary, layer);
        QCOMPARE(int(c.bytes.size()), layers);
        QCOMPARE(c.bytes[std::size_t(k - 1)], bytesAtK);
        QCOMPARE(c.bestK, std::int64_t(bestK));
        QCOMPARE(c.bestBytes, bestBytes);
    }

    // The engine's ledger under full recompute follows the same curve at every k.
    void engineFollowsTheCurve()
    {
        for (int k : {1, 2, 5, 8, 13, 64}) {
            const auto sc =
                test::scenario({R"(model={"kind": "mlp", "width": 1024, "layers": 64})", "training.micro_batch=4",
                                "training.global_batch=4", "training.recompute=full",
                                "training.checkpoint_every=" + std::to_string(k), "cluster.gpus=1"});
            const auto curve = core::checkpointCurveFor(sc);
            QCOMPARE(curve.boundaryBytes, 4.0 * 1024 * 2); // B · D · bf16
            QCOMPARE(core::estimate(sc).memory.activations, curve.bytes[std::size_t(k - 1)]);
        }
    }

    void hostileFilesNameTheField_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QByteArray>("field");
        const QByteArray head = R"({"schema": "napkin.lecture/1", "title": "t", "steps": [)";
        const QByteArray ok = R"({"id": "a", "title": "A", "narration": "n", "focus": "ledger")";
        // clang-format off
        QTest::newRow("invalid JSON") << QByteArray("{\"schema\": ") << QByteArray("lecture.json");
        QTest::newRow("not an object") << QByteArray("[1, 2]") << QByteArray();
        QTest::newRow("wrong schema") << QByteArray(R"({"schema": "napkin.scenario/1", "title": "t", "steps": []})") << QByteArray("schema");
        QTest::newRow("unknown top key") << QByteArray(R"({"schema": "napkin.lecture/1", "title": "t", "titel": "x", "steps": [{"id": "a", "title": "A", "narration": "n", "focus": "ledger"}]})") << QByteArray("titel");
        QTest::newRow("no steps") << QByteArray(R"({"schema": "napkin.lecture/1", "title": "t"})") << QByteArray("steps");
        QTest::newRow("empty steps") << QByteArray(R"({"schema": "napkin.lecture/1", "title": "t", "steps": []})") << QByteArray("steps");
        QTest::newRow("unknown step key") << head + R"({"id": "a", "title": "A", "narrative": "n", "focus": "ledger"}]})" << QByteArray("steps[0].narration");
        QTest::newRow("misspelt step key") << head + ok + R"(, "narative": "x"}]})" << QByteArray("steps[0].narative");
        QTest::newRow("unknown focus") << head + R"({"id": "a", "title": "A", "narration": "n", "focus": "ledgr"}]})" << QByteArray("steps[0].focus");
        QTest::newRow("duplicate id") << head + ok + "}, " + ok + "}]}" << QByteArray("steps[1].id");
        QTest::newRow("bad id") << head + R"({"id": "a b", "title": "A", "narration": "n", "focus": "ledger"}]})" << QByteArray("steps[0].id");
        QTest::newRow("empty title") << head + R"({"id": "a", "title": "", "narration": "n", "focus": "ledger"}]})" << QByteArray("steps[0].title");
        QTest::newRow("scenario not an object") << head + ok + R"(, "scenario": 5}]})" << QByteArray("steps[0].scenario");
        QTest::newRow("invalid scenario value") << head + ok + R"(, "scenario": {"training": {"tokens": -5}}}]})" << QByteArray("steps[0].scenario.training.tokens");
        QTest::newRow("unknown scenario key") << head + ok + R"(, "scenario": {"cluster": {"gpuz": 8}}}]})" << QByteArray("steps[0].scenario.cluster.gpuz");
        QTest::newRow("invalid set") << head + ok + R"(, "set": ["cluster.gpus=0"]}]})" << QByteArray("steps[0].scenario.cluster.gpus");
        QTest::newRow("set not strings") << head + ok + R"(, "set": [5]}]})" << QByteArray("steps[0].set[0]");
        QTest::newRow("unknown quantity") << head + ok + R"(, "expect": [{"quantity": "time.dayz", "value": 1}]}]})" << QByteArray("steps[0].expect[0].quantity");
        QTest::newRow("missing value") << head + ok + R"(, "expect": [{"quantity": "time.days"}]}]})" << QByteArray("steps[0].expect[0].value");
        QTest::newRow("negative tolerance") << head + ok + R"(, "expect": [{"quantity": "time.days", "value": 1, "tolerance": -1}]}]})" << QByteArray("steps[0].expect[0].tolerance");
        QTest::newRow("unknown expect key") << head + ok + R"(, "expect": [{"quantity": "time.days", "value": 1, "tol": 1}]}]})" << QByteArray("steps[0].expect[0].tol");
        QTest::newRow("tensor quantity without tensor") << head + ok + R"(, "expect": [{"quantity": "tensor.bytes", "value": 1}]}]})" << QByteArray("steps[0].expect[0].quantity");
        QTest::newRow("mfu without seconds") << head + ok + R"(, "ops": [{"id": "g", "op": "gemm", "m": 1, "k": 2, "n": 3}], "expect": [{"quantity": "op.g.mfu", "value": 1}]}]})" << QByteArray("steps[0].expect[0].quantity");
        QTest::newRow("checkpoint k beyond layers") << head + ok + R"(, "expect": [{"quantity": "checkpoint.bytes_at.33", "value": 1}]}]})" << QByteArray("steps[0].expect[0].quantity");
        QTest::newRow("unknown derivation") << head + ok + R"(, "derivation": "time.weeks"}]})" << QByteArray("steps[0].derivation");
        QTest::newRow("negative tensor dim") << head + ok + R"(, "tensor": {"shape": [2, -1], "dtype": "fp32"}}]})" << QByteArray("steps[0].tensor.shape[1]");
        QTest::newRow("tensor tf32") << head + ok + R"(, "tensor": {"shape": [2], "dtype": "tf32"}}]})" << QByteArray("steps[0].tensor.dtype");
        QTest::newRow("unknown op") << head + ok + R"(, "ops": [{"id": "g", "op": "conv", "n": 3}]}]})" << QByteArray("steps[0].ops[0].op");
        QTest::newRow("gemm without m") << head + ok + R"(, "ops": [{"id": "g", "op": "gemm", "k": 2, "n": 3}]}]})" << QByteArray("steps[0].ops[0].m");
        QTest::newRow("dtype focus without value") << head + R"({"id": "a", "title": "A", "narration": "n", "focus": "dtype"}]})" << QByteArray("steps[0].dtype");
        QTest::newRow("dtype not a number") << head + ok + R"(, "dtype": "lots"}]})" << QByteArray("steps[0].dtype");
        QTest::newRow("reset not boolean") << head + ok + R"(, "reset": "yes"}]})" << QByteArray("steps[0].reset");
        // clang-format on
    }
    void hostileFilesNameTheField()
    {
        QFETCH(QByteArray, text);
        QFETCH(QByteArray, field);
        core::Errors errors;
        const auto lecture = core::parseLecture(text.toStdString(), "lecture.json", errors);
        QVERIFY(!lecture);
        QVERIFY(!errors.empty());
        QCOMPARE(firstField(errors), QString::fromUtf8(field));
    }

    void minimalFileLoads()
    {
        core::Errors errors;
        const auto l = core::parseLecture(R"({"schema": "napkin.lecture/1", "title": "t", "steps": [
            {"id": "a", "title": "A", "narration": "n", "focus": "summary", "set": ["cluster.gpus=8"],
             "expect": [{"quantity": "compute.data_parallel", "value": 8, "tolerance": 0}]}]})",
                                          "x", errors);
        QVERIFY2(errors.empty(), errors.empty() ? "" : core::describe(errors.front()).c_str());
        QVERIFY(l);
        QCOMPARE(l->steps[0].expect[0].tolerance, 0.0);
        QCOMPARE(l->steps[0].document["cluster"]["gpus"].get<int>(), 8);
    }
};

QTEST_GUILESS_MAIN(TestLecture)
#include "tst_lecture.moc"
