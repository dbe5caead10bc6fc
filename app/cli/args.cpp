// SPDX-FileCopyrightText: 2025-2026 The Napkin developers
// SPDX-License-Identifier: GPL-3.0-or-later
// napkin-cli's command line, declared once with CLI11: every command's options, its --help, the
// --opt=value forms, and the man page (napkin-cli --man) all come from these definitions.

#include "cli.h"
#include "clicommon.h"

#include <CLI/CLI.hpp>

#include <ostream>
#include <sstream>

namespace napkin::cli::detail {

namespace {

constexpr const char* kFooter =
    "Exit status: 0 success; 2 invalid input (one \"error:\" line per problem on stderr, naming the field and\n"
    "the allowed range); 3 with --check when the plan does not fit (or no layout or GPU count does);\n"
    "1 internal or I/O error. Output files are written atomically.";

struct Commands {
    CLI::App app{"Napkin: a language-model training plan's memory per GPU, FLOPs, time and cost, and data movement.",
                 "napkin-cli"};
    bool man = false;
};

// The options every scenario-reading command shares.
void scenarioOptions(CLI::App* c, Options& o)
{
    c->add_option("--set", o.sets,
                  "override one dotted scenario path (repeatable); VALUE is JSON when valid, else a string: "
                  "--set model.preset=llama-2-7b --set cluster.gpus=8")
        ->type_name("PATH=VALUE")
        ->allow_extra_args(false);
}

void outputOptions(CLI::App* c, Options& o, const std::string& formats, const std::string& fallback = "text")
{
    c->add_option("--format", o.format, "output format: " + formats + " (default " + fallback + ")")
        ->type_name("FORMAT");
    c->add_option("-o,--output", o.output, "write to FILE (atomically) instead of stdout")->type_name("FILE");
}

void reportOptions(CLI::App* c, Options& o)
{
    c->add_option("--page", o.page, "page size of PDF reports: a4 (default) or letter")->type_name("SIZE");
    c->add_option("--title", o.title, "report title (default: the scenario's name, else what the plan is)")
        ->type_name("TEXT");
    c->add_flag("--gib", o.gib, "sizes in GiB (2^30 bytes) instead of GB in reports");
}

// A command that plans a scenario: [SCENARIO.json], --set, --format, -o.
CLI::App* scenarioCommand(CLI::App& app, const char* name, const std::string& description, Options& o,
                          const std::string& formats)
{
    auto* c = app.add_subcommand(name, description);
    c->add_option("scenario", o.positional, "a napkin.scenario/1 file (only what differs from the defaults)")
        ->expected(0, 1)
        ->type_name("SCENARIO.json");
    scenarioOptions(c, o);
    outputOptions(c, o, formats);
    return c;
}

void checkOption(CLI::App* c, Options& o, const char* what)
{
    c->add_flag("--check", o.check,
                std::string("exit 3 when ") + what + " (scripts and CI); without it the exit status stays 0");
}

void build(Commands& cmds, Options& o)
{
    auto& app = cmds.app;
    app.footer(kFooter);
    app.set_version_flag("--version", std::string("napkin-cli ") + NAPKIN_VERSION);
    app.add_flag("--man", cmds.man, "print the man page (troff) and exit")->group(""); // hidden
    app.require_subcommand(0, 1);
    app.fallthrough(false);

    auto* plan = scenarioCommand(app, "plan",
                                 "the three budgets of a training plan (default: the built-in scenario); "
                                 "--format pdf|html|md|csv|json -o OUT writes a budget report",
                                 o, "text, json, md, csv, pdf, html");
    reportOptions(plan, o);
    checkOption(plan, o, "the plan does not fit in memory");

    auto* compare = app.add_subcommand("compare", "scenarios side by side with deltas");
    compare->add_option("scenarios", o.positional, "two or more scenario files")
        ->expected(2, 64)
        ->type_name("A.json B.json")
        ->required();
    outputOptions(compare, o, "text, json, md, csv, html, pdf");
    reportOptions(compare, o);

    auto* chart = app.add_subcommand("chart", "one chart of a plan as PNG, SVG or PDF");
    chart
        ->add_option("chart", o.positional,
                     "ledger, roofline, timeline, steptime or stages, then an optional scenario file")
        ->expected(1, 2)
        ->type_name("ledger|roofline|timeline|steptime|stages [SCENARIO.json]")
        ->required();
    scenarioOptions(chart, o);
    outputOptions(chart, o, "png, svg, pdf", "the output file's extension, else png");
    chart
        ->add_option("--size", o.size,
                     "chart size in layout units (default 900x260 ledger, 900x480 roofline, 900x360 timeline and "
                     "stages, 900x300 "
                     "steptime)")
        ->type_name("WxH");
    chart
        ->add_option("--scale", o.scale,
                     "PNG pixels per layout unit: the PNG is (W·scale)×(H·scale); SVG and PDF are vector")
        ->check(CLI::Range(1.0, 4.0))
        ->type_name("1..4")
        ->default_val(2);
    chart->add_flag("--gib", o.gib, "sizes in GiB (2^30 bytes) instead of GB");

    auto* fit = scenarioCommand(app, "fit", "largest model and micro-batch that fit the cluster", o, "text, json");
    checkOption(fit, o, "the scenario's model does not fit at micro-batch 1");

    auto* search =
        scenarioCommand(app, "search",
                        "fastest parallel layouts (TP, PP, virtual stages, CP, DP, micro-batch, recompute, ZeRO) "
                        "that fit, by predicted step time",
                        o, "text, json");
    search->add_option("--top", o.top, "how many layouts to list (1 to 1000, default 10)")->type_name("N");
    search->add_flag("--keep-recompute", o.keepRecompute, "only the scenario's training.recompute");
    search->add_flag("--keep-zero", o.keepZero, "only the scenario's parallel.zero");
    search->add_flag("--keep-etp", o.keepEtp,
                     "mixtures of experts: only the scenario's parallel.etp (default: etp = tp and etp = 1)");
    search->add_flag(
        "--uneven-stages", o.unevenStages,
        "also pipeline depths (powers of two) that do not divide the layers, with uneven first and last stages");
    checkOption(search, o, "no layout fits");

    auto* suggest =
        scenarioCommand(app, "suggest",
                        "the cheapest changes that make the plan fit (micro-batch, recompute, ZeRO, 8-bit optimizer, "
                        "LoRA / QLoRA, offload, more GPUs, a larger GPU), each a full re-plan",
                        o, "text, json");
    checkOption(suggest, o, "no change makes the plan fit");

    auto* gpusFor = scenarioCommand(
        app, "gpus-for", "fewest GPUs that fit and train the scenario's tokens within D days", o, "text, json");
    gpusFor->add_option("--deadline-days", o.deadlineDays, "the deadline, 0.001 to 100000 days")
        ->type_name("D")
        ->required();
    gpusFor
        ->add_option(
            "--batch", o.batch,
            "fixed (default): keep training.global_batch, so data parallelism stops at global_batch / micro_batch "
            "ranks and the answer says when the deadline needs more; scale: more ranks may grow the batch")
        ->type_name("fixed|scale");
    checkOption(gpusFor, o, "no GPU count meets the deadline");

    auto* validate =
        app.add_subcommand("validate", "predicted vs published throughput of the built-in set of published "
                                       "training runs (docs/validation.md), or of SET.json in its format");
    validate->add_option("set", o.positional)->expected(0, 1)->type_name("SET.json");
    outputOptions(validate, o, "text, json, md, svg");

    auto* op = app.add_subcommand("op", "FLOPs, bytes, intensity and bound of one operation on the scenario's GPU");
    op->add_option("kind", o.positional, "gemm, relu, gelu, dot or matvec")->expected(1)->type_name("KIND")->required();
    op->add_option("--m", o.m, "GEMM rows")->type_name("M");
    op->add_option("--k", o.k, "GEMM reduction dimension")->type_name("K");
    op->add_option("--n", o.n, "GEMM columns, or the vector length")->type_name("N");
    op->add_option("--dtype", o.dtype, "element dtype (default bf16)")->type_name("DTYPE");
    op->add_flag("--exact", o.exact, "count a GEMM's additions exactly: M·N·(2K − 1) instead of 2MKN");
    scenarioOptions(op, o);
    outputOptions(op, o, "text, json");

    auto* presets = app.add_subcommand("presets", "the built-in catalogues");
    presets->add_option("which", o.positional, "gpus, models or plans (default all)")
        ->expected(0, 1)
        ->type_name("gpus|models|plans");
    outputOptions(presets, o, "text, json");

    auto* dtype = app.add_subcommand("dtype", "how fp32, fp16, bf16, fp8 e4m3/e5m2, NVFP4 and MXFP4 store VALUE");
    dtype->add_option("value", o.positional)->expected(1)->type_name("VALUE")->required();
    outputOptions(dtype, o, "text, json");

    auto* reconcile = scenarioCommand(
        app, "reconcile", "measured MFU/HFU and the predicted ledger beside a real run's peak memory", o, "text, json");
    // One of --step-time and --tokens-per-second is needed: core::reconcile says so, naming both.
    reconcile->add_option("--step-time", o.stepTime, "measured seconds per optimizer step")->type_name("S");
    reconcile
        ->add_option("--tokens-per-second", o.tokensPerSecond, "measured throughput (instead of the step's tokens)")
        ->type_name("N");
    reconcile->add_option("--peak-allocated", o.peakAllocated, "torch.cuda.max_memory_allocated")->type_name("BYTES");
    reconcile->add_option("--peak-reserved", o.peakReserved, "torch.cuda.max_memory_reserved")->type_name("BYTES");

    app.add_subcommand("help", "this help");
    for (auto* sub : app.get_subcommands({}))
        sub->footer(kFooter);
}

// troff for man(7): the same names and descriptions the --help output shows.
std::string troff(const std::string& text)
{
    std::string out;
    for (char c : text) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '-')
            out += "\\-";
        else
            out += c;
    }
    return out;
}

std::string renderMan(const CLI::App& app)
{
    std::ostringstream m;
    m << ".TH NAPKIN-CLI 1 \"\" \"napkin-cli " << NAPKIN_VERSION << "\" \"User Commands\"\n";
    m << ".SH NAME\nnapkin\\-cli \\- " << troff(app.get_description()) << "\n";
    m << ".SH SYNOPSIS\n.B napkin\\-cli\n.I COMMAND\n[\\fIoptions\\fR]\n";
    m << ".SH COMMANDS\n";
    for (const auto* sub : app.get_subcommands({})) {
        if (sub->get_name() == "help")
            continue;
        m << ".SS " << troff(sub->get_name());
        for (const auto* pos : sub->get_options([](const CLI::Option* x) { return x->get_positional(); }))
            m << " " << troff(pos->get_type_name());
        m << "\n" << troff(sub->get_description()) << "\n";
        for (const auto* opt : sub->get_options([](const CLI::Option* x) { return !x->get_positional(); })) {
            if (opt->get_name() == "--help")
                continue;
            m << ".TP\n.B " << troff(opt->get_name(false, true));
            if (opt->get_type_size() != 0)
                m << " \\fI" << troff(opt->get_type_name()) << "\\fR";
            m << "\n" << troff(opt->get_description()) << "\n";
        }
    }
    m << ".SH EXIT STATUS\n" << troff(kFooter) << "\n";
    m << ".SH SEE ALSO\n.BR napkin (1)\n";
    return m.str();
}

} // namespace

int parseCommandLine(int argc, char** argv, Options& o, std::ostream& out, std::ostream& err)
{
    Commands cmds;
    build(cmds, o);
    auto& app = cmds.app;
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp&) {
        out << app.help();
        return Ok;
    } catch (const CLI::CallForAllHelp&) {
        out << app.help("", CLI::AppFormatMode::All);
        return Ok;
    } catch (const CLI::CallForVersion& v) {
        out << v.what() << "\n";
        return Ok;
    } catch (const CLI::ParseError& e) {
        // CLI11 names the option ("--set: 1 required PATH=VALUE missing", "The following argument was
        // not expected: --top"): one error line, the contract of every napkin-cli error.
        err << "error: " << e.what() << " (see napkin-cli "
            << (app.get_subcommands().empty() ? std::string() : app.get_subcommands().front()->get_name() + " ")
            << "--help)\n";
        return InvalidInput;
    }
    if (cmds.man) {
        out << renderMan(app);
        return Ok;
    }
    const auto chosen = app.get_subcommands();
    // A chart without --format takes its format from -o's extension (cmdChart): "" says "not given".
    if (!chosen.empty() && chosen.front()->get_name() == "chart" && chosen.front()->count("--format") == 0)
        o.format.clear();
    if (chosen.empty()) {
        err << "error: no command given (allowed: plan, compare, chart, fit, search, gpus-for, validate, op, presets, "
               "dtype, "
               "reconcile; see napkin-cli --help)\n";
        return InvalidInput;
    }
    if (chosen.front()->get_name() == "help") { // the top-level help, not the "help" command's own
        Options unused;
        Commands fresh;
        build(fresh, unused);
        out << fresh.app.help();
        return Ok;
    }
    o.command = chosen.front()->get_name();
    return -1;
}

} // namespace napkin::cli::detail
