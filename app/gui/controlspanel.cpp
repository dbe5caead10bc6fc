// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
#include "controlspanel.h"

#include "calibrationrunner.h"
#include "catalog.h"
#include "jsonreader.h"
#include "parallelcontrols.h"
#include "plancontroller.h"
#include "quantityslider.h"
#include "steptimecontrols.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QVBoxLayout>

namespace napkin::app {

namespace {

QString qs(const std::string& s) { return QString::fromStdString(s); }

// Value at a dotted path of the document, or null.
const nlohmann::json* at(const nlohmann::json& doc, const QString& path)
{
    const nlohmann::json* node = &doc;
    for (const auto& part : path.split(QLatin1Char('.'))) {
        if (!node->is_object())
            return nullptr;
        const auto it = node->find(part.toStdString());
        if (it == node->end())
            return nullptr;
        node = &*it;
    }
    return node;
}

QGroupBox* group(QVBoxLayout* parent, const QString& title)
{
    auto* box = new QGroupBox(title);
    auto* v = new QVBoxLayout(box);
    v->setSpacing(6);
    parent->addWidget(box);
    return box;
}

// The storage dtypes a bucket may take (core/dtype.cpp's table, in the order a user reads them).
QStringList dtypeIds()
{
    return {QStringLiteral("fp32"),     QStringLiteral("fp16"),  QStringLiteral("bf16"),  QStringLiteral("fp8_e4m3"),
            QStringLiteral("fp8_e5m2"), QStringLiteral("mxfp8"), QStringLiteral("nvfp4"), QStringLiteral("mxfp4")};
}

} // namespace

ControlsPanel::ControlsPanel(PlanController* controller, QWidget* parent) : QWidget(parent), m_controller(controller)
{
    const auto& cat = core::builtinCatalog();
    auto* root = new QVBoxLayout(this);
    root->setContentsMargins(6, 6, 6, 6);

    // ---- Model
    auto* model = group(root, tr("Model"));
    m_model = new QComboBox;
    m_model->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_model->setMinimumContentsLength(12);
    m_model->setToolTip(tr("A published architecture with its exact parameter count, or a bare parameter count"));
    for (const auto& m : cat.models)
        m_model->addItem(qs(m.name), qs(m.id));
    m_model->addItem(tr("Parameter count only"), QStringLiteral("params"));
    m_model->addItem(tr("Custom architecture"), QStringLiteral("custom"));
    model->layout()->addWidget(m_model);
    connect(m_model, &QComboBox::activated, this, [this] {
        const QString id = m_model->currentData().toString();
        if (id == QLatin1String("params"))
            m_controller->set(QStringLiteral("model.params"), m_controller->plan().params.total);
        else if (id != QLatin1String("custom") && id != QLatin1String("hf"))
            m_controller->set(QStringLiteral("model.preset"), id.toStdString());
    });
    m_params = addSlider(model, QStringLiteral("model.params"), tr("Parameters"), 1e7, 2e12, true, false, QString(),
                         tr("Total parameters; a plausible shape is derived for activations and the roofline"));
    m_shape = new QLabel;
    m_shape->setWordWrap(true);
    m_shape->setAutoFillBackground(true); // repainting its text must not repaint the panel
    model->layout()->addWidget(m_shape);
    m_import = new QPushButton(tr("Import config.json…"));
    m_import->setToolTip(tr("Read the architecture from a config.json (or drop the file on the window)"));
    connect(m_import, &QPushButton::clicked, this, &ControlsPanel::importRequested);
    model->layout()->addWidget(m_import);
    auto* arch = new QGroupBox(tr("Architecture"));
    arch->setCheckable(true);
    arch->setChecked(false);
    auto* archBody = new QWidget;
    auto* archLayout = new QVBoxLayout(archBody);
    archLayout->setContentsMargins(0, 0, 0, 0);
    (new QVBoxLayout(arch))->addWidget(archBody);
    archBody->setVisible(false);
    connect(arch, &QGroupBox::toggled, archBody, &QWidget::setVisible);
    model->layout()->addWidget(arch);
    struct ArchField {
        const char* key;
        QString label;
        double min, max;
        QString tip;
    };
    const ArchField fields[] = {
        {"layers", tr("Layers"), 1, 1000, tr("Transformer blocks")},
        {"d_model", tr("Hidden size d_model"), 64, 65536, tr("Width of the residual stream")},
        {"heads", tr("Attention heads"), 1, 512, tr("Query heads; must divide d_model unless head_dim is set")},
        {"kv_heads", tr("KV heads"), 1, 512, tr("Key/value heads: fewer than heads is GQA, 1 is MQA")},
        {"ffn", tr("FFN size"), 64, 262144, tr("Inner size of the MLP")},
        {"head_dim", tr("Head size"), 16, 1024, tr("Width of each attention head (d_model / heads unless set)")},
        {"vocab", tr("Vocabulary"), 256, 1048576, tr("Rows of the embedding and columns of the logits")},
        {"moe.experts", tr("Routed experts"), 0, 1024,
         tr("Mixture of experts: routed experts per MoE layer (0 = dense)")},
        {"moe.top_k", tr("Experts per token"), 1, 64, tr("Routed experts each token runs through (top-k)")},
        {"moe.expert_ffn", tr("Expert FFN size"), 16, 262144, tr("Inner size of each routed expert")},
        {"moe.shared_experts", tr("Shared experts"), 0, 64,
         tr("Experts every token runs through (DeepSeek, Qwen2-MoE, Llama 4)")},
        // Multi-head latent attention (DeepSeek-V2 §2.1): used with Attention "latent (MLA)" only.
        {"q_lora_rank", tr("MLA query rank"), 0, 65536,
         tr("Rank of the compressed query (0 = queries not compressed, DeepSeek-V2-Lite)")},
        {"kv_lora_rank", tr("MLA key/value rank"), 1, 65536,
         tr("Rank of the latent that keys and values are rebuilt from: what the KV cache stores")},
        {"qk_nope_head_dim", tr("MLA q/k head size"), 1, 1024, tr("Per-head query/key width without rotary positions")},
        {"qk_rope_head_dim", tr("MLA rotary head size"), 1, 1024,
         tr("Per-head query/key width that carries rotary positions (the key part shared by all heads)")},
        {"v_head_dim", tr("MLA value head size"), 1, 1024, tr("Per-head value width")},
        {"mtp_layers", tr("MTP depths"), 0, 64,
         tr("Multi-token prediction modules (DeepSeek-V3): trained with the model, not in its parameter count")},
    };
    for (const auto& f : fields) {
        auto* s = addSlider(archBody, QStringLiteral("model.") + QLatin1String(f.key), f.label, f.min, f.max, true,
                            true, QString(), f.tip);
        disconnect(s, &QuantitySlider::valueEdited, nullptr, nullptr);
        const QString key = QLatin1String(f.key);
        connect(s, &QuantitySlider::valueEdited, this,
                [this, key](double v) { editArchitecture(key, std::int64_t(v)); });
    }
    struct ArchChoice {
        const char* key;
        QString label;
        QStringList ids;
        QStringList names;
        QString tip;
    };
    const ArchChoice choices[] = {
        {"ffn_kind",
         tr("MLP"),
         {QStringLiteral("swiglu"), QStringLiteral("geglu"), QStringLiteral("gelu")},
         {tr("SwiGLU (3 matrices)"), tr("GeGLU (3 matrices, Gemma)"), tr("GELU (2 matrices)")},
         tr("Gated SwiGLU or GeGLU, or a 2-matrix GELU MLP")},
        {"norm",
         tr("Norm"),
         {QStringLiteral("rmsnorm"), QStringLiteral("layernorm"), QStringLiteral("layernorm_nobias"),
          QStringLiteral("nonparametric")},
         {tr("RMSNorm (weight)"), tr("LayerNorm (weight + bias)"), tr("LayerNorm (weight only, DBRX)"),
          tr("non-parametric (OLMo 1)")},
         tr("Normalisation layers and their parameters")},
        {"biases",
         tr("Biases"),
         {QStringLiteral("none"), QStringLiteral("all"), QStringLiteral("qkv"), QStringLiteral("attention"),
          QStringLiteral("mlp")},
         {tr("none (Llama)"), tr("all (GPT-2/3)"), tr("q, k, v (Qwen2)"), tr("q, k, v, o"), tr("MLP only")},
         tr("Which linear layers carry biases")},
        {"positions",
         tr("Positions"),
         {QStringLiteral("rotary"), QStringLiteral("learned"), QStringLiteral("relative"), QStringLiteral("none")},
         {tr("rotary (no parameters)"), tr("learned table"), tr("relative (Transformer-XL)"), tr("none")},
         tr("How positions enter the model")},
        {"tied_embeddings",
         tr("Tied embeddings"),
         {QStringLiteral("false"), QStringLiteral("true")},
         {tr("no: separate output layer"), tr("yes: shared with the input")},
         tr("Whether the output layer reuses the embedding matrix")},
        {"dropout",
         tr("Dropout"),
         {QStringLiteral("false"), QStringLiteral("true")},
         {tr("no"), tr("yes (masks stored)")},
         tr("GPT-style dropout: its masks are saved activations (Korthikanti et al. 2022)")},
        {"attention",
         tr("Attention"),
         {QStringLiteral("mha"), QStringLiteral("mla")},
         {tr("multi-head (GQA/MQA by KV heads)"), tr("latent (MLA, DeepSeek)")},
         tr("Multi-head attention, or DeepSeek's multi-head latent attention (keys and values from a low-rank "
            "latent)")},
        {"qk_norm",
         tr("QK-norm"),
         {QStringLiteral("false"), QStringLiteral("true"), QStringLiteral("head")},
         {tr("no"), tr("full projections (OLMo 2)"), tr("per head (Qwen3)")},
         tr("RMSNorm over the q and k projections")},
    };
    for (const auto& ch : choices) {
        auto* c =
            addCombo(archBody, QStringLiteral("model.") + QLatin1String(ch.key), ch.label, ch.ids, ch.names, ch.tip);
        disconnect(c, &QComboBox::activated, nullptr, nullptr);
        const QString key = QLatin1String(ch.key);
        connect(c, &QComboBox::activated, this, [this, c, key] {
            const QString id = c->currentData().toString();
            editArchitecture(key, id == QLatin1String("true")    ? nlohmann::json(true)
                                  : id == QLatin1String("false") ? nlohmann::json(false)
                                                                 : nlohmann::json(id.toStdString()));
        });
    }

    // ---- Training
    auto* training = group(root, tr("Training"));
    addSlider(training, QStringLiteral("training.tokens"), tr("Training tokens"), 1e8, 1e14, true, false, tr("tokens"),
              tr("Total tokens processed, repeats included (T in 6PT)"));
    m_chinchilla = new QPushButton;
    m_chinchilla->setFlat(true);
    m_chinchilla->setAutoFillBackground(true);
    m_chinchilla->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_chinchilla->setToolTip(
        tr("Hoffmann et al. 2022: about 20 tokens per parameter is compute-optimal (fitted on dense "
           "models; a mixture of experts is counted by its total parameters)"));
    connect(m_chinchilla, &QPushButton::clicked, this,
            [this] { m_controller->set(QStringLiteral("training.tokens"), 20.0 * m_controller->plan().params.total); });
    training->layout()->addWidget(m_chinchilla);
    addSlider(training, QStringLiteral("training.seq_len"), tr("Sequence length"), 128, 1048576, true, true,
              tr("tokens"), tr("Tokens per sequence; attention scores grow with its square"));
    addSlider(training, QStringLiteral("training.micro_batch"), tr("Micro-batch"), 1, 4096, true, true, tr("sequences"),
              tr("Sequences per GPU per forward/backward; activations follow it"));
    addSlider(training, QStringLiteral("training.global_batch"), tr("Global batch"), 1, 1048576, true, true,
              tr("sequences"), tr("Sequences per optimizer step = micro-batch × accumulation × GPUs"));
    m_accumulation = new QLabel;
    m_accumulation->setWordWrap(true);
    m_accumulation->setAutoFillBackground(true);
    training->layout()->addWidget(m_accumulation);
    addCombo(training, QStringLiteral("training.recompute"), tr("Activation recomputation"),
             {QStringLiteral("none"), QStringLiteral("selective"), QStringLiteral("full"), QStringLiteral("modules"),
              QStringLiteral("op")},
             {tr("None"), tr("Selective (attention core)"), tr("Full (checkpoint every k layers)"),
              tr("Modules (Megatron-Core)"), tr("Op-level (torchtitan)")},
             tr("Trade FLOPs for activation memory (Korthikanti et al. 2022; Megatron-Core modules; torchtitan's op "
                "policy)"));
    auto* ck = new QWidget;
    auto* ckForm = new QFormLayout(ck);
    ckForm->setContentsMargins(0, 0, 0, 0);
    m_checkpoint = new QSpinBox;
    m_checkpoint->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    m_checkpoint->setRange(0, 100000);
    m_checkpoint->setSpecialValueText(tr("auto (√L)"));
    m_checkpoint->setToolTip(tr("Layers per checkpointed segment with full recompute: O(L/k + k) memory"));
    ckForm->addRow(tr("Checkpoint every"), m_checkpoint);
    training->layout()->addWidget(ck);
    connect(m_checkpoint, &QSpinBox::valueChanged, this, [this](int v) {
        if (!m_syncing)
            m_controller->set(QStringLiteral("training.checkpoint_every"),
                              v == 0 ? nlohmann::json("auto") : nlohmann::json(v));
    });
    m_flash = new QCheckBox(tr("FlashAttention"));
    m_flash->setToolTip(tr("Fused attention keeps the s×s scores on chip: drops the 5as²b term"));
    training->layout()->addWidget(m_flash);
    connect(m_flash, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_syncing)
            m_controller->set(QStringLiteral("training.flash_attention"), on);
    });

    // ---- Precision and optimizer
    auto* precision = group(root, tr("Precision and optimizer"));
    QStringList planIds, planNames;
    for (const auto& p : cat.plans) {
        planIds << qs(p.id);
        planNames << qs(p.id);
    }
    addCombo(precision, QStringLiteral("precision.plan"), tr("Precision plan"), planIds, planNames,
             tr("Named dtype plans: bf16-mixed is 12 B/param with Adam, with an fp32 master 16"));
    auto* buckets = new QWidget;
    auto* bl = new QVBoxLayout(buckets);
    bl->setContentsMargins(0, 0, 0, 0);
    precision->layout()->addWidget(buckets);
    const QStringList kDtypes = dtypeIds();
    addCombo(buckets, QStringLiteral("precision.weights"), tr("Weights"), kDtypes, kDtypes,
             tr("Storage dtype of the parameters"));
    addCombo(buckets, QStringLiteral("precision.gradients"), tr("Gradients"), kDtypes, kDtypes,
             tr("Storage dtype of the gradients"));
    addCombo(buckets, QStringLiteral("precision.master"), tr("Master weights"),
             QStringList{QStringLiteral("none")} + kDtypes, QStringList{tr("none")} + kDtypes,
             tr("A separate high-precision copy of the weights, or none"));
    addCombo(buckets, QStringLiteral("precision.optimizer"), tr("Optimizer states"),
             kDtypes + QStringList{QStringLiteral("int8_blockwise")},
             kDtypes + QStringList{tr("int8 blockwise (bitsandbytes 8-bit)")},
             tr("Storage dtype of the optimizer's moment arrays; int8 blockwise: bitsandbytes' 8-bit states, 1 + "
                "4/2048 bytes"));
    addCombo(buckets, QStringLiteral("precision.activations"), tr("Activations"), kDtypes, kDtypes,
             tr("Storage dtype of saved activations and logits"));
    const QStringList computes = QStringList{QStringLiteral("fp32"), QStringLiteral("tf32")} + kDtypes.mid(1);
    addCombo(buckets, QStringLiteral("precision.compute"), tr("Matmul compute"), computes, computes,
             tr("Which dense tensor-core rate the time estimate uses"));
    addCombo(
        buckets, QStringLiteral("precision.recipe"), tr("FP8 / FP4 recipe"),
        {QStringLiteral("auto"), QStringLiteral("none"), QStringLiteral("delayed"), QStringLiteral("current"),
         QStringLiteral("blockwise"), QStringLiteral("mxfp8"), QStringLiteral("nvfp4")},
        {tr("auto (from the compute dtype)"), tr("none (16-bit GEMMs)"), tr("delayed scaling (TE default)"),
         tr("current scaling"), tr("block-wise (DeepSeek-V3)"), tr("MXFP8 (Blackwell)"), tr("NVFP4")},
        tr("How the low-precision GEMMs are scaled: QKV, output and MLP run in the compute dtype, attention and the "
           "output layer stay in BF16; the quantise kernels and Transformer Engine's FP8 weight copies are priced"));
    addCombo(precision, QStringLiteral("optimizer.name"), tr("Optimizer"),
             {QStringLiteral("adamw"), QStringLiteral("adam"), QStringLiteral("sgd"), QStringLiteral("momentum"),
              QStringLiteral("adagrad"), QStringLiteral("rmsprop"), QStringLiteral("lion"), QStringLiteral("adafactor"),
              QStringLiteral("muon")},
             {tr("AdamW (2 states)"), tr("Adam (2 states)"), tr("SGD (none)"), tr("Momentum (1)"), tr("AdaGrad (1)"),
              tr("RMSProp (1)"), tr("Lion (1)"), tr("Adafactor (factored)"), tr("Muon (1)")},
             tr("Optimizer states per parameter: the optimizer lattice of CS336 lecture 2"));
    addCombo(precision, QStringLiteral("optimizer.implementation"), tr("Optimizer update"),
             {QStringLiteral("auto"), QStringLiteral("fused"), QStringLiteral("foreach"), QStringLiteral("forloop")},
             {tr("auto (fused)"), tr("fused (one pass)"), tr("foreach (PyTorch, a pass per op)"),
              tr("forloop (Composer, PyTorch < 2.0)")},
             tr("Fused Adam reads and writes each tensor once (Megatron-LM, DeepSpeed, torchtitan today); PyTorch's "
                "foreach Adam(W) makes a pass per operation, about 80 bytes a parameter against 28"));

    // ---- Fine-tuning (core/finetune.h): LoRA / QLoRA freeze the base and train low-rank adapters.
    auto* finetune = group(root, tr("Fine-tuning"));
    addCombo(
        finetune, QStringLiteral("finetune.method"), tr("Method"),
        {QStringLiteral("full"), QStringLiteral("lora"), QStringLiteral("qlora")},
        {tr("Full (every weight trains)"), tr("LoRA (frozen base, adapters)"), tr("QLoRA (NF4 base, adapters)")},
        tr("LoRA (Hu et al. 2021): gradients and optimizer states for the adapters only; QLoRA (Dettmers et al. 2023) "
           "stores the frozen base in 4-bit NF4"));
    addSlider(finetune, QStringLiteral("finetune.lora_rank"), tr("LoRA rank r"), 1, 1024, true, true, QString(),
              tr("Each adapter is A (r × in) and B (out × r)"));
    auto* adapters = addCombo(finetune, QStringLiteral("finetune.lora_targets"), tr("Adapters on"),
                              {QStringLiteral("all-linear"), QStringLiteral("q,v"), QStringLiteral("q,k,v,o")},
                              {tr("every linear layer"), tr("q and v (the LoRA paper)"), tr("attention (q, k, v, o)")},
                              tr("PEFT target_modules: which linear layers of each block get an adapter"));
    disconnect(adapters, &QComboBox::activated, nullptr, nullptr);
    connect(adapters, &QComboBox::activated, this, [this, adapters] {
        if (m_syncing)
            return;
        const QString id = adapters->currentData().toString();
        nlohmann::json v = id.toStdString();
        if (id.contains(QLatin1Char(','))) {
            v = nlohmann::json::array();
            for (const QString& t : id.split(QLatin1Char(',')))
                v.push_back(t.toStdString());
        }
        m_controller->set(QStringLiteral("finetune.lora_targets"), v);
    });

    // ---- Cluster
    // ZeRO-Offload / ZeRO-Infinity and activation offload (core/offload.h): the host row under the
    // ledger's total shows what leaves the GPU.
    auto* offload = group(root, tr("Offload"));
    const QStringList targets{QStringLiteral("none"), QStringLiteral("cpu"), QStringLiteral("nvme")};
    const QStringList targetNames{tr("none"), tr("CPU memory"), tr("NVMe (needs offload.nvme_bandwidth)")};
    addCombo(offload, QStringLiteral("offload.optimizer"), tr("Optimizer states"), targets, targetNames,
             tr("ZeRO-Offload (Ren et al. 2021): master copy and optimizer states on the host, the update on the CPU"));
    addCombo(offload, QStringLiteral("offload.params"), tr("Parameters"), targets, targetNames,
             tr("ZeRO-Infinity / FSDP CPUOffload: parameter shards on the host (needs ZeRO-3 or FSDP full shard)"));
    addCombo(offload, QStringLiteral("offload.activations"), tr("Activations"),
             {QStringLiteral("none"), QStringLiteral("cpu")}, {tr("none"), tr("CPU memory")},
             tr("Megatron-Core CPU offloading: saved tensors to the host between a layer's forward and backward"));

    auto* cluster = group(root, tr("Cluster"));
    QStringList gpuIds, gpuNames;
    for (const auto& g : cat.gpus) {
        gpuIds << qs(g.id);
        gpuNames << qs(g.name);
    }
    // Profiles measured on this machine (Hardware > Calibrate this GPU), after the catalogue.
    for (const auto& p : CalibrationRunner::storedProfiles()) {
        gpuIds << QStringLiteral("calibration:") + p.path;
        gpuNames << p.label;
    }
    addCombo(cluster, QStringLiteral("cluster.gpu"), tr("GPU"), gpuIds, gpuNames,
             tr("Dense (not 2:4-sparse) peaks, bandwidth and capacity from the vendor's sheet"));
    addSlider(cluster, QStringLiteral("cluster.gpus"), tr("GPUs"), 1, 100000, true, true, tr("GPUs"),
              tr("Data-parallel GPUs; time halves when they double at fixed MFU"));
    addCombo(cluster, QStringLiteral("parallel.zero"), tr("ZeRO stage"),
             {QStringLiteral("0"), QStringLiteral("1"), QStringLiteral("2"), QStringLiteral("3")},
             {tr("0: replicate"), tr("1: shard optimizer states"), tr("2: + gradients"), tr("3: + parameters")},
             tr("Rajbhandari et al. 2019: which model states are sharded over the GPUs"));
    cluster->layout()->addWidget(new ParallelControls(controller)); // FSDP, beside the ZeRO stage
    addSlider(cluster, QStringLiteral("parallel.tp"), tr("Tensor parallel (TP)"), 1, 64, true, true, tr("ranks"),
              tr("Splits each layer's matrices and activations over t GPUs; must divide the heads"));
    addSlider(cluster, QStringLiteral("parallel.pp"), tr("Pipeline stages (PP)"), 1, 128, true, true, tr("stages"),
              tr("Splits the layers into stages; the first stage holds min(p, m) micro-batches in flight"));
    addSlider(cluster, QStringLiteral("parallel.cp"), tr("Context parallel (CP)"), 1, 64, true, true, tr("ranks"),
              tr("Splits the sequence over ranks; must divide the sequence length"));
    addCombo(cluster, QStringLiteral("parallel.cp_comm"), tr("CP exchange"),
             {QStringLiteral("p2p"), QStringLiteral("all_gather"), QStringLiteral("a2a")},
             {tr("ring (p2p), behind attention"), tr("all-gather K/V (Llama 3)"), tr("all-to-all heads (Ulysses)")},
             tr("How context-parallel attention exchanges the sequence (--cp-comm-type): the ring hides behind "
                "attention; the all-gather and the all-to-alls are exposed"));
    addSlider(
        cluster, QStringLiteral("parallel.ep"), tr("Expert parallel (EP)"), 1, 256, true, true, tr("ranks"),
        tr("Mixture of experts: each rank holds experts / EP of every MoE layer; EP · ETP must divide TP · CP · DP "
           "(Megatron-Core folds the expert layout onto the same GPUs)"));
    m_sp = new QCheckBox(tr("Sequence parallel (with TP)"));
    m_sp->setToolTip(tr("Korthikanti et al. 2022: norm and dropout activations are split over the TP ranks too"));
    cluster->layout()->addWidget(m_sp);
    connect(m_sp, &QCheckBox::toggled, this, [this](bool on) {
        if (!m_syncing)
            m_controller->set(QStringLiteral("parallel.sequence_parallel"), on);
    });
    m_layout = new QLabel;
    m_layout->setWordWrap(true);
    m_layout->setAutoFillBackground(true);
    cluster->layout()->addWidget(m_layout);
    auto* stepTime = new StepTimeControls(controller); // time mode, links, Find best layout
    cluster->layout()->addWidget(stepTime);
    auto* mfu = addSlider(cluster, QStringLiteral("cluster.mfu"), tr("MFU"), 0.01, 1.0, false, false, QString(),
                          tr("Model FLOPs utilisation you expect: 0.5 is good (CS336)"));
    mfu->setDecimals(2);
    stepTime->setMfuSlider(mfu);
    auto* price = addSlider(cluster, QStringLiteral("cluster.price_per_gpu_hour"), tr("Price"), 0, 20, false, false,
                            tr("$/GPU-hour"), tr("What one GPU-hour costs you"));
    price->setDecimals(2);
    addCombo(cluster, QStringLiteral("flops.convention"), tr("FLOPs convention"),
             {QStringLiteral("auto"), QStringLiteral("6PT"), QStringLiteral("palm"), QStringLiteral("megatron"),
              QStringLiteral("megatron-core")},
             {tr("auto"), tr("6PT (Kaplan; the lecture)"), tr("PaLM: 6N + 12LHQT"), tr("Megatron-LM eq. 3"),
              tr("Megatron-Core (active experts, causal)")},
             tr("How model FLOPs per token are counted"));
    root->addStretch(1);

    connect(controller, &PlanController::documentChanged, this, &ControlsPanel::syncFromDocument);
    connect(controller, &PlanController::planChanged, this, &ControlsPanel::updateDerivedLabels);
    connect(controller, &PlanController::planChanged, this, &ControlsPanel::syncPlanPrecision);
    syncFromDocument();
    updateDerivedLabels();
}

QuantitySlider* ControlsPanel::addSlider(QWidget* box, const QString& path, const QString& label, double min,
                                         double max, bool log, bool integer, const QString& unit, const QString& tip)
{
    auto* s = new QuantitySlider(label, min, max, log ? QuantitySlider::Scale::Log : QuantitySlider::Scale::Linear);
    s->setInteger(integer);
    s->setUnit(unit);
    s->setToolTip(tip);
    box->layout()->addWidget(s);
    m_sliders.insert(path, s);
    connect(s, &QuantitySlider::valueEdited, this, [this, path, integer](double v) {
        if (m_syncing)
            return;
        m_controller->set(path, integer ? nlohmann::json(std::int64_t(v)) : nlohmann::json(v));
    });
    return s;
}

QComboBox* ControlsPanel::addCombo(QWidget* box, const QString& path, const QString& label, const QStringList& ids,
                                   const QStringList& names, const QString& tip)
{
    auto* row = new QWidget;
    auto* form = new QFormLayout(row);
    form->setContentsMargins(0, 0, 0, 0);
    auto* c = new QComboBox;
    // Long names (GPU models) must not widen the panel: elide to the field's width.
    c->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    c->setMinimumContentsLength(12);
    c->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    for (int i = 0; i < ids.size(); ++i)
        c->addItem(names.value(i, ids[i]), ids[i]);
    c->setToolTip(tip);
    form->addRow(label, c);
    box->layout()->addWidget(row);
    m_combos.insert(path, c);
    connect(c, &QComboBox::activated, this, [this, c, path] {
        if (m_syncing)
            return;
        const QString id = c->currentData().toString();
        bool isInt = false;
        const int n = id.toInt(&isInt);
        m_controller->set(path, isInt ? nlohmann::json(n) : nlohmann::json(id.toStdString()));
    });
    return c;
}

void ControlsPanel::addGpuProfile(const QString& path, const QString& label)
{
    QComboBox* c = m_combos.value(QStringLiteral("cluster.gpu"));
    const QString id = QStringLiteral("calibration:") + path;
    if (c && c->findData(id) < 0)
        c->addItem(label, id);
}

void ControlsPanel::editArchitecture(const QString& key, const nlohmann::json& value)
{
    if (m_syncing)
        return;
    const auto& model = m_controller->document().value("model", nlohmann::json::object());
    QString field = key;
    nlohmann::json v = value;
    if (key.startsWith(QLatin1String("moe."))) {
        // The experts' fields travel as one object, so that a dense model given experts gets a whole,
        // valid one: k = min(2, E) experts of the dense width to start from.
        const auto& m = m_controller->scenario().model.shape.moe;
        const auto& sh = m_controller->scenario().model.shape;
        nlohmann::json moe = model.value("moe", nlohmann::json::object());
        moe["experts"] = m.experts;
        moe["top_k"] = std::max<std::int64_t>(1, m.topK);
        moe["expert_ffn"] = m.expertFfn > 0 ? m.expertFfn : sh.ffn;
        moe[key.mid(4).toStdString()] = value;
        if (m.experts == 0 && key == QLatin1String("moe.experts"))
            moe["top_k"] = std::min<std::int64_t>(2, std::max<std::int64_t>(1, value.get<std::int64_t>()));
        moe["top_k"] =
            std::min(moe["top_k"].get<std::int64_t>(), std::max<std::int64_t>(1, moe["experts"].get<std::int64_t>()));
        field = QStringLiteral("moe");
        v = moe;
    }
    // Latent attention needs its ranks and head sizes together: a model without them starts from
    // DeepSeek-V3's (config.json: q 1536, kv 512, 128 + 64 / 128; arXiv 2412.19437 §4.2).
    nlohmann::json extra = nlohmann::json::object();
    if (key == QLatin1String("attention") && value == "mla" && m_controller->scenario().model.shape.mla.kvLoraRank <= 0)
        extra = {{"q_lora_rank", 1536},
                 {"kv_lora_rank", 512},
                 {"qk_nope_head_dim", 128},
                 {"qk_rope_head_dim", 64},
                 {"v_head_dim", 128}};
    if (model.contains("preset") || model.contains("hf_config") || model.contains("kind")) {
        if (extra.empty()) {
            m_controller->set(QStringLiteral("model.") + field, v);
            return;
        }
        nlohmann::json doc = m_controller->document();
        doc["model"][field.toStdString()] = v;
        doc["model"].update(extra);
        m_controller->setDocument(doc, tr("Change model.%1").arg(key));
        return;
    }
    // A bare parameter count becomes a custom architecture from its derived shape.
    const auto& s = m_controller->scenario().model.shape;
    nlohmann::json arch = {{"kind", "transformer"},
                           {"layers", s.layers},
                           {"d_model", s.dModel},
                           {"heads", s.heads},
                           {"kv_heads", s.kvHeads},
                           {"ffn", s.ffn},
                           {"ffn_kind", core::toString(s.ffnKind)},
                           {"vocab", s.vocab},
                           {"tied_embeddings", s.tiedEmbeddings}};
    arch[field.toStdString()] = v;
    arch.update(extra);
    nlohmann::json doc = m_controller->document();
    doc["model"] = arch;
    m_controller->setDocument(doc, tr("Change model.%1").arg(key));
}

// A precision bucket the document does not set: its dtype comes from the precision plan.
bool ControlsPanel::isPlanDefault(const QString& key) const
{
    const auto* v = at(m_controller->document(), key);
    return key.startsWith(QLatin1String("precision.")) && key != QLatin1String("precision.plan") &&
           (!v || v->is_null());
}

QString ControlsPanel::planPrecisionId(const QString& key) const
{
    const auto& p = m_controller->scenario().precision;
    const QString bucket = key.mid(10);
    auto name = [](core::DType t) {
        return QString::fromLatin1(core::info(t).id.data(), qsizetype(core::info(t).id.size()));
    };
    return bucket == QLatin1String("weights")       ? name(p.weights)
           : bucket == QLatin1String("gradients")   ? name(p.gradients)
           : bucket == QLatin1String("master")      ? (p.master ? name(*p.master) : QStringLiteral("none"))
           : bucket == QLatin1String("optimizer")   ? name(p.optimizer)
           : bucket == QLatin1String("activations") ? name(p.activations)
                                                    : name(p.compute);
}

// The scenario is parsed after documentChanged: once the plan is there, the buckets the document
// leaves to the precision plan show that plan's dtypes (a loaded file's plan, not the previous one).
void ControlsPanel::syncPlanPrecision()
{
    const bool was = m_syncing;
    m_syncing = true;
    for (auto it = m_combos.cbegin(); it != m_combos.cend(); ++it)
        if (isPlanDefault(it.key()))
            if (const int index = it.value()->findData(planPrecisionId(it.key()));
                index >= 0 && index != it.value()->currentIndex())
                it.value()->setCurrentIndex(index);
    m_syncing = was;
}

void ControlsPanel::syncFromDocument()
{
    m_syncing = true;
    const auto& doc = m_controller->document();
    for (auto it = m_sliders.cbegin(); it != m_sliders.cend(); ++it) {
        // Quantity strings ("15T", "8Ki", "1,024") show what the plan uses, not the previous value.
        const auto* v = at(doc, it.key());
        if (const auto q = v ? core::jsonQuantity(*v) : std::nullopt)
            it.value()->setValue(*q);
    }
    for (auto it = m_combos.cbegin(); it != m_combos.cend(); ++it) {
        const auto* v = at(doc, it.key());
        QString id;
        if (v && v->is_string())
            id = qs(v->get<std::string>());
        else if (v && v->is_number_integer())
            id = QString::number(v->get<int>());
        else if (v && v->is_array()) { // finetune.lora_targets: ["q", "v"] is the item "q,v"
            QStringList parts;
            for (const auto& x : *v)
                parts << (x.is_string() ? qs(x.get<std::string>()) : QString());
            id = parts.join(QLatin1Char(','));
        } else if (isPlanDefault(it.key()))
            id = planPrecisionId(it.key()); // not overridden: what the precision plan says
        int index = it.value()->findData(id);
        if (index < 0 && it.key() == QLatin1String("cluster.gpu") && id.startsWith(QLatin1String("calibration:"))) {
            addGpuProfile(id.mid(12),
                          tr("%1 (measured)").arg(QFileInfo(id.mid(12)).fileName())); // a scenario's own profile
            index = it.value()->findData(id);
        }
        if (index >= 0)
            it.value()->setCurrentIndex(index);
    }
    const auto model = doc.value("model", nlohmann::json::object());
    QString modelId = QStringLiteral("custom");
    if (model.contains("preset") && model["preset"].is_string())
        modelId = qs(model["preset"].get<std::string>());
    else if (model.contains("params"))
        modelId = QStringLiteral("params");
    else if (model.contains("hf_config")) {
        // An imported config.json: named from the config, not "Custom architecture".
        modelId = QStringLiteral("hf");
        const QString text = tr("Imported: %1").arg(qs(m_controller->scenario().model.name));
        const int at = m_model->findData(modelId);
        if (at < 0)
            m_model->addItem(text, modelId);
        else
            m_model->setItemText(at, text);
    }
    const int mi = m_model->findData(modelId);
    m_model->setCurrentIndex(mi >= 0 ? mi : m_model->findData(QStringLiteral("custom")));
    const auto* ck = at(doc, QStringLiteral("training.checkpoint_every"));
    const auto ckValue = ck ? core::jsonQuantity(*ck) : std::nullopt;
    m_checkpoint->setValue(ckValue && *ckValue >= 1 && *ckValue <= 1e6 ? int(*ckValue) : 0);
    const auto* spv = at(doc, QStringLiteral("parallel.sequence_parallel"));
    m_sp->setChecked(spv && spv->is_boolean() && spv->get<bool>());
    const auto* fa = at(doc, QStringLiteral("training.flash_attention"));
    m_flash->setChecked(!fa || !fa->is_boolean() || fa->get<bool>());
    m_syncing = false;
}

void ControlsPanel::updateDerivedLabels()
{
    m_syncing = true;
    const auto& plan = m_controller->plan();
    const auto& sc = m_controller->scenario();
    m_params->setValue(plan.params.total);
    const auto& s = sc.model.shape;
    if (sc.model.kind == core::ModelKind::Mlp)
        m_shape->setText(
            tr("Deep linear model: %1 layers of width %2").arg(sc.model.mlp.layers).arg(sc.model.mlp.width));
    else {
        // Latent attention has no KV heads to speak of: its ranks say what it stores.
        const QString attention = s.attention == core::AttentionKind::Mla
                                      ? tr("%1 heads, latent attention (q rank %2, kv rank %3)")
                                            .arg(s.heads)
                                            .arg(s.mla.qLoraRank)
                                            .arg(s.mla.kvLoraRank)
                                      : tr("%1 heads (%2 KV) of %3").arg(s.heads).arg(s.kvHeads).arg(s.headDim);
        if (core::isMoe(s)) // mixture of experts: the routed experts stand where the dense ffn would
            m_shape->setText(tr("%1 layers (%2 MoE), d %3, %4, %5 of %6 experts of %7 per token%8, vocab %9")
                                 .arg(s.layers)
                                 .arg(core::moeLayerCount(s))
                                 .arg(s.dModel)
                                 .arg(attention)
                                 .arg(s.moe.topK)
                                 .arg(s.moe.experts)
                                 .arg(s.moe.expertFfn)
                                 .arg(s.moe.sharedExperts > 0 ? tr(" + %1 shared").arg(s.moe.sharedExperts) : QString())
                                 .arg(s.vocab));
        else
            m_shape->setText(tr("%1%2 layers, d %3, %4, %5 ffn %6, vocab %7")
                                 .arg(plan.params.derivedShape ? tr("Derived shape: ") : QString())
                                 .arg(s.layers)
                                 .arg(s.dModel)
                                 .arg(attention)
                                 .arg(QLatin1String(core::toString(s.ffnKind)))
                                 .arg(s.ffn)
                                 .arg(s.vocab));
    }
    const QHash<QString, double> arch{
        {QStringLiteral("model.layers"), double(s.layers)},
        {QStringLiteral("model.d_model"), double(s.dModel)},
        {QStringLiteral("model.heads"), double(s.heads)},
        {QStringLiteral("model.kv_heads"), double(s.kvHeads)},
        {QStringLiteral("model.ffn"), double(s.ffn)},
        {QStringLiteral("model.head_dim"), double(s.headDim)},
        {QStringLiteral("model.vocab"), double(s.vocab)},
        {QStringLiteral("model.moe.experts"), double(s.moe.experts)},
        {QStringLiteral("model.moe.top_k"), double(std::max<std::int64_t>(1, s.moe.topK))},
        {QStringLiteral("model.moe.expert_ffn"), double(s.moe.expertFfn > 0 ? s.moe.expertFfn : s.ffn)},
        {QStringLiteral("model.moe.shared_experts"), double(s.moe.sharedExperts)},
        {QStringLiteral("model.q_lora_rank"), double(s.mla.qLoraRank)},
        {QStringLiteral("model.kv_lora_rank"), double(s.mla.kvLoraRank)},
        {QStringLiteral("model.qk_nope_head_dim"), double(s.mla.qkNopeHeadDim)},
        {QStringLiteral("model.qk_rope_head_dim"), double(s.mla.qkRopeHeadDim)},
        {QStringLiteral("model.v_head_dim"), double(s.mla.vHeadDim)},
        {QStringLiteral("model.mtp_layers"), double(s.mtpLayers)}};
    for (auto it = arch.cbegin(); it != arch.cend(); ++it)
        if (auto* sl = m_sliders.value(it.key()))
            sl->setValue(it.value());
    // The latent-attention sizes mean something only with latent attention; KV heads only without.
    const bool mla = s.attention == core::AttentionKind::Mla;
    for (const char* k : {"model.q_lora_rank", "model.kv_lora_rank", "model.qk_nope_head_dim", "model.qk_rope_head_dim",
                          "model.v_head_dim"})
        if (auto* sl = m_sliders.value(QLatin1String(k)))
            sl->setEnabled(mla && sc.model.kind == core::ModelKind::Transformer);
    if (auto* sl = m_sliders.value(QStringLiteral("model.kv_heads")))
        sl->setEnabled(!mla);
    const QHash<QString, QString> archIds{
        {QStringLiteral("model.ffn_kind"), QLatin1String(core::toString(s.ffnKind))},
        {QStringLiteral("model.norm"), QLatin1String(core::toString(s.norm))},
        {QStringLiteral("model.biases"), QLatin1String(core::toString(s.biases))},
        {QStringLiteral("model.positions"), QLatin1String(core::toString(s.positions))},
        {QStringLiteral("model.tied_embeddings"), s.tiedEmbeddings ? QStringLiteral("true") : QStringLiteral("false")},
        {QStringLiteral("model.attention"), QLatin1String(core::toString(s.attention))},
        {QStringLiteral("model.dropout"), s.dropout ? QStringLiteral("true") : QStringLiteral("false")},
        {QStringLiteral("model.qk_norm"), s.qkNorm == core::QkNorm::Head   ? QStringLiteral("head")
                                          : s.qkNorm == core::QkNorm::Full ? QStringLiteral("true")
                                                                           : QStringLiteral("false")}};
    for (auto it = archIds.cbegin(); it != archIds.cend(); ++it)
        if (auto* c = m_combos.value(it.key()))
            c->setCurrentIndex(c->findData(it.value()));
    m_accumulation->setText(tr("%1 accumulation steps × micro-batch %2 × %3 GPUs = %4 sequences")
                                .arg(plan.compute.accumulationSteps)
                                .arg(sc.training.microBatch)
                                .arg(plan.compute.dataParallel)
                                .arg(plan.compute.effectiveGlobalBatch));
    // Hoffmann et al.'s law was fitted on dense models: for a mixture of experts say which count it takes.
    m_chinchilla->setText(plan.params.active < plan.params.total
                              ? tr("Chinchilla: 20 × total params = %1").arg(formatCount(20.0 * plan.params.total))
                              : tr("Chinchilla: 20 tokens/param = %1").arg(formatCount(20.0 * plan.params.total)));
    m_layout->setText(tr("Layout: TP %1 × PP %2 × CP %3 × DP %4 = %5 GPUs%6%7")
                          .arg(sc.parallel.tp)
                          .arg(sc.parallel.pp)
                          .arg(sc.parallel.cp)
                          .arg(plan.compute.dataParallel)
                          .arg(sc.cluster.gpus)
                          .arg(sc.parallel.pp > 1 ? tr("; bubble %1 %, ledger of stage %2")
                                                        .arg(100 * plan.memory.bubbleFraction, 0, 'f', 1)
                                                        .arg(plan.memory.mostLoadedStage)
                                                  : QString(),
                               plan.moe.applies ? tr("; experts: EP %1 × ETP %2 × EDP %3")
                                                      .arg(plan.moe.expertRanks)
                                                      .arg(plan.moe.expertTensorRanks)
                                                      .arg(plan.moe.expertDataParallel)
                                                : QString()));
    // Expert parallelism means something only for a mixture of experts.
    if (auto* ep = m_sliders.value(QStringLiteral("parallel.ep")))
        ep->setVisible(plan.moe.applies || sc.parallel.epUnused > 1);
    if (auto* tokens = m_sliders.value(QStringLiteral("training.tokens")))
        tokens->setMarker(20.0 * plan.params.total,
                          tr("▲ Chinchilla point: about 20 tokens per parameter (Hoffmann et al. 2022) = %1 tokens")
                              .arg(formatCount(20.0 * plan.params.total)));
    m_syncing = false;
}

} // namespace napkin::app
