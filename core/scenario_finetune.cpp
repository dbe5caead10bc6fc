// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// The scenario's finetune section (LoRA, QLoRA) and optimizer.paged, with the checks that span
// sections (core/finetune.h); precision.recipe and precision.low_precision_gemms (core/lowprecision.h).

#include "jsonreader.h"
#include "scenario_sections.h"

#include <string>

namespace napkin::core::detail {

namespace {

constexpr const char* kTargetsAllowed = "\"all-linear\", or an array of q, k, v, o, gate, up, down";

void readTargets(ObjectReader& r, FinetuneConfig& f)
{
    const auto* t = r.child("lora_targets");
    if (!t || t->is_null())
        return;
    if (t->is_string() && t->get<std::string>() == "all-linear")
        return;
    static constexpr std::pair<const char*, std::uint8_t> kNames[] = {
        {"q", kLoraQ},       {"k", kLoraK},   {"v", kLoraV},      {"o", kLoraO},
        {"gate", kLoraGate}, {"up", kLoraUp}, {"down", kLoraDown}};
    std::uint8_t bits = 0;
    bool ok = t->is_array() && !t->empty() && t->size() <= 7;
    for (std::size_t i = 0; ok && i < t->size(); ++i) {
        const auto& x = (*t)[i];
        std::uint8_t bit = 0;
        if (x.is_string())
            for (const auto& [name, b] : kNames)
                if (x.get<std::string>() == name)
                    bit = b;
        ok = bit != 0 && !(bits & bit);
        bits |= bit;
    }
    if (!ok) {
        r.error("lora_targets", shortDump(*t),
                "must be \"all-linear\" or a non-empty array of distinct linear-layer names", kTargetsAllowed);
        return;
    }
    f.targets = bits;
    f.allLinear = false;
}

} // namespace

void readFinetune(const nlohmann::json& node, Scenario& sc, Errors& errors)
{
    ObjectReader r(node, "finetune", errors);
    auto& f = sc.finetune;
    f.method = r.choice<FinetuneMethod>(
                    "method",
                    {{"full", FinetuneMethod::Full}, {"lora", FinetuneMethod::Lora}, {"qlora", FinetuneMethod::Qlora}})
                   .value_or(FinetuneMethod::Full);
    f.loraRank = r.integer("lora_rank", 1, 65536).value_or(16);
    readTargets(r, f);
    const int base = r.choice<int>("base_dtype", {{"auto", -1},
                                                  {"bf16", int(BaseStorage::Weights)},
                                                  {"int8", int(BaseStorage::Int8)},
                                                  {"nf4", int(BaseStorage::Nf4)}})
                         .value_or(-1);
    f.base =
        base >= 0 ? BaseStorage(base) : (f.method == FinetuneMethod::Qlora ? BaseStorage::Nf4 : BaseStorage::Weights);
    if (base == int(BaseStorage::Weights) && sc.precision.weights != DType::Bf16)
        r.error("base_dtype", "\"bf16\"",
                "the frozen base is stored in precision.weights, which is " +
                    std::string(info(sc.precision.weights).id),
                "\"auto\" (the weight dtype), or precision.weights bf16");
    f.doubleQuant = r.boolean("double_quant").value_or(true);
    f.loraDropout = r.number("lora_dropout", 0, 0.99).value_or(0);
    if (f.method == FinetuneMethod::Qlora && f.base == BaseStorage::Weights)
        r.error("base_dtype", "\"bf16\"", "QLoRA stores the frozen base quantised",
                "\"auto\" (nf4), \"nf4\", \"int8\"; or method \"lora\"");
    if (f.method == FinetuneMethod::Full && f.base != BaseStorage::Weights)
        r.error("base_dtype", std::string("\"") + (f.base == BaseStorage::Nf4 ? "nf4" : "int8") + "\"",
                "full fine-tuning updates every weight, which a quantised base cannot hold",
                "\"auto\"; or method \"lora\" / \"qlora\"");
    r.finish();
}

void readRecipe(ObjectReader& r, PrecisionConfig& p)
{
    const int recipe = r.choice<int>("recipe", {{"auto", -1},
                                                {"none", int(LowPrecisionRecipe::None)},
                                                {"delayed", int(LowPrecisionRecipe::Delayed)},
                                                {"current", int(LowPrecisionRecipe::Current)},
                                                {"blockwise", int(LowPrecisionRecipe::Blockwise)},
                                                {"mxfp8", int(LowPrecisionRecipe::Mxfp8)},
                                                {"nvfp4", int(LowPrecisionRecipe::Nvfp4)}})
                           .value_or(-1);
    const bool fp8 = p.compute == DType::Fp8E4m3 || p.compute == DType::Fp8E5m2;
    // The format each recipe runs its GEMMs in.
    auto natural = [&]() {
        return fp8                         ? LowPrecisionRecipe::Delayed
               : p.compute == DType::Mxfp8 ? LowPrecisionRecipe::Mxfp8
               : p.compute == DType::Nvfp4 ? LowPrecisionRecipe::Nvfp4
                                           : LowPrecisionRecipe::None;
    };
    p.recipeAuto = recipe < 0;
    p.recipe = recipe < 0 ? natural() : LowPrecisionRecipe(recipe);
    const LowPrecisionRecipe r0 = p.recipe;
    const bool ok = r0 == LowPrecisionRecipe::None    ? !fp8 && natural() == LowPrecisionRecipe::None
                    : r0 == LowPrecisionRecipe::Mxfp8 ? p.compute == DType::Mxfp8
                    : r0 == LowPrecisionRecipe::Nvfp4 ? p.compute == DType::Nvfp4
                                                      : fp8;
    if (!ok)
        r.error(
            "recipe", std::string("\"") + toString(r0) + "\"",
            "does not run its GEMMs in precision.compute " + std::string(info(p.compute).id),
            "\"auto\"; delayed, current or blockwise with compute fp8_e4m3 / fp8_e5m2; mxfp8 with mxfp8; nvfp4 with "
            "nvfp4; none with a 16- or 32-bit compute dtype");
    // Megatron-Core --fp8-param-gather: the weights live in the recipe's format, so it needs one.
    if (const auto v = r.boolean("fp8_param_gather")) {
        p.fp8ParamGather = *v;
        if (*v && p.recipe == LowPrecisionRecipe::None)
            r.error("fp8_param_gather", "true", "needs an FP8 / FP4 recipe (precision.recipe)",
                    "false; true with a recipe (precision.compute fp8_e4m3, fp8_e5m2, mxfp8 or nvfp4)");
    }
    const auto* g = r.child("low_precision_gemms");
    if (!g || g->is_null())
        return;
    static constexpr std::pair<const char*, std::uint8_t> kNames[] = {
        {"qkv", kLowQkv}, {"out", kLowOut}, {"mlp", kLowMlp}, {"head", kLowHead}, {"attention", kLowAttention}};
    std::uint8_t bits = 0;
    bool valid = g->is_array() && !g->empty() && g->size() <= 5;
    for (std::size_t i = 0; valid && i < g->size(); ++i) {
        std::uint8_t bit = 0;
        if ((*g)[i].is_string())
            for (const auto& [name, b] : kNames)
                if ((*g)[i].get<std::string>() == name)
                    bit = b;
        valid = bit != 0 && !(bits & bit);
        bits |= bit;
    }
    if (!valid) {
        r.error("low_precision_gemms", shortDump(*g), "must be a non-empty array of distinct GEMM classes",
                "an array of qkv, out, mlp, head, attention (default [\"qkv\", \"out\", \"mlp\"])");
        return;
    }
    p.lowPrecisionGemms = bits;
}

void readPaged(ObjectReader& r, PagedOptimizer& paged)
{
    const auto* v = r.child("paged");
    if (!v || v->is_null() || (v->is_string() && v->get<std::string>() == "auto"))
        return;
    if (!v->is_boolean()) {
        r.error("paged", shortDump(*v), "must be true, false or \"auto\"", "true, false, \"auto\" (on for QLoRA)");
        return;
    }
    paged.on = v->get<bool>();
    paged.automatic = false;
}

void checkFinetune(Scenario& sc, Errors& errors)
{
    auto& f = sc.finetune;
    if (sc.pagedOptimizer.automatic)
        sc.pagedOptimizer.on = f.method == FinetuneMethod::Qlora;
    // foreach is PyTorch's own Adam(W); bitsandbytes' 8-bit and paged optimizers run their own kernels.
    if (const char* unfused = unfusedOptimizerValue(sc);
        *unfused && (sc.precision.optimizerInt8Blockwise || sc.pagedOptimizer.on))
        errors.push_back(
            {"optimizer.implementation", unfused,
             "bitsandbytes' 8-bit and paged optimizers run their own kernels, not PyTorch's foreach or loop update",
             "\"auto\" or \"fused\" with precision.optimizer int8_blockwise or optimizer.paged"});
    if (!f.peft())
        return;
    const std::string method = toString(f.method);
    const auto& s = sc.model.shape;
    auto fail = [&](const std::string& why, const std::string& allowed) {
        errors.push_back({"finetune.method", "\"" + method + "\"", why, allowed});
    };
    if (sc.model.kind == ModelKind::Mlp)
        return fail("the toy deep linear model has no transformer blocks to adapt", "\"full\"");
    if (isMoe(s) || s.attention == AttentionKind::Mla)
        return fail(sc.model.name + " has " + (isMoe(s) ? "routed experts" : "multi-head latent attention") +
                        ": LoRA on expert and latent projections is not modelled yet",
                    "\"full\", or a dense model with q, k, v, o projections");
    if (sc.offload.any())
        return fail("offload.* with a frozen base is not modelled (the adapters' states are tiny)",
                    "offload.optimizer, offload.params and offload.activations \"none\"");
    if (!f.allLinear && (f.targets & kLoraGate) && !isGated(s.ffnKind))
        errors.push_back({"finetune.lora_targets", "\"gate\"", sc.model.name + "'s MLP has no gate projection (GELU)",
                          "q, k, v, o, up, down"});
    if (f.allLinear)
        f.targets = isGated(s.ffnKind) ? kLoraAllTargets : std::uint8_t(kLoraAllTargets & ~kLoraGate);
}

} // namespace napkin::core::detail
