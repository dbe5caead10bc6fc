// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// Number formats: storage bytes with block scales, and rounding against known bit patterns.
#include "testsupport.h"

#include "dtype.h"
#include "dtypeexplain.h"

using namespace napkin;
using core::DType;

class TestDType : public QObject {
    Q_OBJECT
private slots:
    void bytesPerValue_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("bytes");
        QTest::newRow("fp32") << QStringLiteral("fp32") << 4.0;
        QTest::newRow("fp16") << QStringLiteral("fp16") << 2.0;
        QTest::newRow("bf16") << QStringLiteral("bf16") << 2.0;
        QTest::newRow("fp8_e4m3") << QStringLiteral("fp8_e4m3") << 1.0;
        QTest::newRow("fp8_e5m2") << QStringLiteral("fp8_e5m2") << 1.0;
        QTest::newRow("mxfp8: 1 + 1/32") << QStringLiteral("mxfp8") << 1.03125;
        QTest::newRow("nvfp4: 0.5 + 1/16") << QStringLiteral("nvfp4") << 0.5625;
        QTest::newRow("mxfp4: 0.5 + 1/32") << QStringLiteral("mxfp4") << 0.53125;
    }
    void bytesPerValue()
    {
        QFETCH(QString, id);
        QFETCH(double, bytes);
        const auto t = core::parseDType(id.toStdString());
        QVERIFY(t);
        QCOMPARE(core::bytesPerValue(*t), bytes);
    }

    void rounding_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("in");
        QTest::addColumn<double>("out");
        // fp16: max 65504, smallest subnormal 2^-24, 1/3 -> 0x3555 = 0.333251953125.
        // clang-format off
        QTest::newRow("fp16 1/3") << QStringLiteral("fp16") << 1.0 / 3 << 0.333251953125;
        QTest::newRow("fp16 max") << QStringLiteral("fp16") << 65504.0 << 65504.0;
        QTest::newRow("fp16 overflow") << QStringLiteral("fp16") << 65520.0 << std::numeric_limits<double>::infinity();
        QTest::newRow("fp16 below max+half") << QStringLiteral("fp16") << 65519.0 << 65504.0;
        QTest::newRow("fp16 smallest subnormal") << QStringLiteral("fp16") << std::ldexp(1.0, -24) << std::ldexp(1.0, -24);
        QTest::newRow("fp16 half subnormal ties to even 0") << QStringLiteral("fp16") << std::ldexp(1.0, -25) << 0.0;
        // bf16: 8 significant bits, 1/3 -> 0x3EAB = 0.333984375; 1 + 2^-8 ties to even -> 1.
        QTest::newRow("bf16 1/3") << QStringLiteral("bf16") << 1.0 / 3 << 0.333984375;
        QTest::newRow("bf16 1+2^-8 ties to even") << QStringLiteral("bf16") << 1.0 + std::ldexp(1.0, -8) << 1.0;
        QTest::newRow("bf16 1+3*2^-8 ties to even") << QStringLiteral("bf16") << 1.0 + 3 * std::ldexp(1.0, -8) << 1.0 + std::ldexp(1.0, -6);
        // E4M3 (Micikevicius et al. 2022): max 448, saturating here; min subnormal 2^-9.
        QTest::newRow("e4m3 max") << QStringLiteral("fp8_e4m3") << 448.0 << 448.0;
        QTest::newRow("e4m3 saturates") << QStringLiteral("fp8_e4m3") << 1000.0 << 448.0;
        QTest::newRow("e4m3 min subnormal") << QStringLiteral("fp8_e4m3") << std::ldexp(1.0, -9) << std::ldexp(1.0, -9);
        QTest::newRow("e4m3 0.3") << QStringLiteral("fp8_e4m3") << 0.3 << 0.3125;
        // E5M2: max 57344, overflow to infinity.
        QTest::newRow("e5m2 max") << QStringLiteral("fp8_e5m2") << 57344.0 << 57344.0;
        QTest::newRow("e5m2 overflow") << QStringLiteral("fp8_e5m2") << 70000.0 << std::numeric_limits<double>::infinity();
        // E2M1 (NVFP4/MXFP4 elements): {0, 0.5, 1, 1.5, 2, 3, 4, 6}.
        QTest::newRow("e2m1 2.6") << QStringLiteral("nvfp4") << 2.6 << 3.0;
        QTest::newRow("e2m1 5.2") << QStringLiteral("nvfp4") << 5.2 << 6.0;
        QTest::newRow("e2m1 -0.7") << QStringLiteral("mxfp4") << -0.7 << -0.5;
        QTest::newRow("e2m1 saturates") << QStringLiteral("nvfp4") << 100.0 << 6.0;
        QTest::newRow("fp32 0.1") << QStringLiteral("fp32") << 0.1 << double(0.1f);
        // clang-format on
    }
    void rounding()
    {
        QFETCH(QString, id);
        QFETCH(double, in);
        QFETCH(double, out);
        QCOMPARE(core::roundToFormat(*core::parseDType(id.toStdString()), in), out);
    }

    void bitPatterns_data()
    {
        QTest::addColumn<QString>("id");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("pattern"); // sign exponent mantissa
        // IEEE 754: fp32 0.1 = 0x3DCCCCCD, fp16 1.0 = 0x3C00, fp16 65504 = 0x7BFF, fp16 2^-24 = 0x0001.
        // clang-format off
        QTest::newRow("fp32 0.1") << QStringLiteral("fp32") << 0.1 << QStringLiteral("0 01111011 10011001100110011001101");
        QTest::newRow("fp16 1.0") << QStringLiteral("fp16") << 1.0 << QStringLiteral("0 01111 0000000000");
        QTest::newRow("fp16 max") << QStringLiteral("fp16") << 65504.0 << QStringLiteral("0 11110 1111111111");
        QTest::newRow("fp16 min subnormal") << QStringLiteral("fp16") << std::ldexp(1.0, -24) << QStringLiteral("0 00000 0000000001");
        QTest::newRow("fp16 -2") << QStringLiteral("fp16") << -2.0 << QStringLiteral("1 10000 0000000000");
        // bfloat16 1/3 = 0x3EAB.
        QTest::newRow("bf16 1/3") << QStringLiteral("bf16") << 1.0 / 3 << QStringLiteral("0 01111101 0101011");
        // FP8 (Micikevicius et al. 2022): E4M3 448 = S.1111.110, E5M2 57344 = S.11110.11.
        QTest::newRow("e4m3 448") << QStringLiteral("fp8_e4m3") << 448.0 << QStringLiteral("0 1111 110");
        QTest::newRow("e5m2 57344") << QStringLiteral("fp8_e5m2") << 57344.0 << QStringLiteral("0 11110 11");
        QTest::newRow("e5m2 overflow is inf") << QStringLiteral("fp8_e5m2") << 1e6 << QStringLiteral("0 11111 00");
        // E2M1: 6 = 0.11.1, 0.5 = 0.00.1 (subnormal).
        QTest::newRow("e2m1 6") << QStringLiteral("nvfp4") << 6.0 << QStringLiteral("0 11 1");
        QTest::newRow("e2m1 0.5") << QStringLiteral("mxfp4") << 0.5 << QStringLiteral("0 00 1");
        // clang-format on
    }
    void bitPatterns()
    {
        QFETCH(QString, id);
        QFETCH(double, value);
        QFETCH(QString, pattern);
        const auto v = core::storeValue(*core::parseDType(id.toStdString()), value);
        QCOMPARE(QString::fromStdString(v.signBits + " " + v.exponentBits + " " + v.mantissaBits), pattern);
    }

    void explorerFacts()
    {
        // CS336: 1e-8 underflows in fp16 and survives in bf16; 1 + 0.001 is 1 in bf16.
        const auto fp16 = core::storeValue(DType::Fp16, 1e-8);
        QVERIFY(fp16.underflow);
        QVERIFY(!core::storeValue(DType::Bf16, 1e-8).underflow);
        const auto b = core::storeValue(DType::Bf16, 1.001);
        QCOMPARE(b.stored, 1.0);
        QCOMPARE(b.spacing, 1.0 / 128); // 8 significant bits near 1
        QCOMPARE(core::storeValue(DType::Fp16, 1.0).spacing, 1.0 / 1024);
        QCOMPARE(core::storeValue(DType::Fp16, 1.0).minSubnormal, std::ldexp(1.0, -24));
        QVERIFY(core::storeValue(DType::Fp8E4m3, 1000).overflow); // saturates at 448
        QCOMPARE(core::storeInAll(1.0).size(), std::size_t(7));
    }

    void unknownDtype()
    {
        QVERIFY(!core::parseDType("fp12"));
        QVERIFY(!core::info(DType::Tf32).storable);
    }
};

QTEST_GUILESS_MAIN(TestDType)
#include "tst_dtype.moc"
