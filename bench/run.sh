#!/bin/sh
# bench/run.sh BUILD — perfcast's speed and accuracy figures (`make bench`).
#
# Prints one JSON object per line per figure ("figure": machine, speed_1param,
# speed_2param, modeler_cache, robust_modeler, audit, modeler_audit, accuracy, ingest_plain, ingest_gzip,
# http_startup, http_health, http_create, upload_serial, upload_parallel, ...),
# then a human summary on lines starting with "# ". Data and outputs go to
# BUILD/bench-data/. Every step runs under BUILD/bench/rusage with a time
# limit (BENCH_TIMEOUT seconds, default 120), so a hung or crashing step
# becomes an {"error": ...} line and the others still run; the exit status is
# 1 when any step failed.
#
# Reference rates: Extra-P documents ~13 ms per single-parameter model
# (76.9 models/s) and ~25 ms per two-parameter model (40 models/s); perfcast's
# targets are 100,000 and 20,000 models/s. HTA parses the 35 MB one-rank
# Kineto trace of an 8-rank job in 2.9 s (12.1 MB/s, 232 MB RSS); perfcast's
# target is 200 MB/s of uncompressed JSON and 15x HTA, peak RSS <= 128 MB.
set -u
BUILD=${1:-build}
cd "$(dirname "$0")/.." || exit 2
B=$BUILD/bench
DATA=$BUILD/bench-data
LIMIT=${BENCH_TIMEOUT:-120}
PERFCAST=$BUILD/perfcast
mkdir -p "$DATA" || exit 2
failed=0
summary=$DATA/summary.txt
: >"$summary"

say() { printf '# %s\n' "$*" >>"$summary"; }

# jget KEY JSON — the raw value of KEY in a one-line JSON object.
jget() { printf '%s\n' "$2" | sed -n 's/.*"'"$1"'": *\([^,}]*\).*/\1/p'; }

# fail FIGURE MESSAGE — reports a step that did not produce its figure.
fail() {
    msg=$(printf '%s' "$2" | tr -d '"\\')
    printf '{"figure": "%s", "error": "%s"}\n' "$1" "$msg"
    say "$1: FAILED: $msg"
    failed=1
}

# measure OUTFILE CMD... — runs CMD under rusage; sets $ru to its JSON line.
# Fails (status 1) when CMD could not run, timed out or exited non-zero.
measure() {
    out=$1; shift
    ru=$("$B/rusage" -t "$LIMIT" -o "$out" "$@" 2>"$out.err")
    code=$(jget exit "$ru")
    if [ "$code" != 0 ]; then
        why="exit ${code:-?}"
        [ "$(jget timed_out "$ru")" = true ] && why="timed out after ${LIMIT}s"
        err=$(tail -n 3 "$out.err" 2>/dev/null | tr "\n" " " | sed "s/ *$//")
        ru="$* failed: $why${err:+: $err}"
        return 1
    fi
}

calc() { awk "BEGIN { printf \"$1\", $2 }"; }

machine() {
    cores=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN)
    cpu=$(sed -n 's/^model name[[:space:]]*:[[:space:]]*//p' /proc/cpuinfo 2>/dev/null | head -n 1)
    [ -n "$cpu" ] || cpu=$(uname -m)
    cpu=$(printf '%s' "$cpu" | tr -d '"\\')
    printf '{"figure": "machine", "nproc": %s, "cpu": "%s"}\n' "$cores" "$cpu"
    say "machine: $cores cores, $cpu"
}

# speed FIGURE PARAMS CALLPATHS SEED EXTRAP_RATE TARGET_RATE
speed() {
    fig=$1 params=$2 n=$3 seed=$4 extrap=$5 target=$6
    base=$DATA/$fig
    if ! measure "$base.gen" "$B/gen_pmnf" "$base" --callpaths "$n" --params "$params" \
        --noise 0.05 --reps 5 --seed "$seed"; then
        fail "$fig" "$ru"; return
    fi
    gen_s=$(jget wall_s "$ru")
    if ! measure "$base.models" "$PERFCAST" model --modeler extrap "$base.txt"; then
        fail "$fig" "$ru"; return
    fi
    wall=$(jget wall_s "$ru")
    rate=$(calc "%.1f" "$n / $wall")
    lines=$(wc -l <"$base.models" | tr -d ' ')
    printf '{"figure": "%s", "params": %s, "callpaths": %s, "points": %s, "reps": 5, ' \
        "$fig" "$params" "$n" "$([ "$params" = 1 ] && echo 5 || echo 25)"
    printf '"wall_s": %s, "user_s": %s, "sys_s": %s, "max_rss_mb": %s, "models_per_s": %s, ' \
        "$wall" "$(jget user_s "$ru")" "$(jget sys_s "$ru")" "$(jget max_rss_mb "$ru")" "$rate"
    printf '"extrap_models_per_s": %s, "speedup_vs_extrap": %s, "target_models_per_s": %s, ' \
        "$extrap" "$(calc "%.1f" "$rate / $extrap")" "$target"
    printf '"fraction_of_target": %s, "output_lines": %s, "gen_wall_s": %s}\n' \
        "$(calc "%.3f" "$rate / $target")" "$lines" "$gen_s"
    say "$fig: $n models of $params parameter(s) in ${wall} s = $rate models/s;" \
        "$(calc "%.0f" "$rate / $extrap")x Extra-P ($extrap/s), $(calc "%.2f" "$rate / $target")x" \
        "the $target/s target; peak RSS $(jget max_rss_mb "$ru") MB"
}

modeler_cache() {
    if ! measure "$DATA/modeler_cache.out" "$B/bench_modeler" --series1 2000 --series2 500 \
        --seed 7 --min-time 0.5; then
        fail modeler_cache "$ru"; return
    fi
    cat "$DATA/modeler_cache.out"
    while read -r line; do
        say "modeler_cache: $(jget params "$line") param(s): shared modeler" \
            "$(jget shared_models_per_s "$line")/s, fresh per series" \
            "$(jget fresh_models_per_s "$line")/s, ratio $(jget speedup "$line")," \
            "shared modeler $(jget shared_cpu_us_per_model "$line") us of CPU per model," \
            "differing models $(jget differing_models "$line")"
    done <"$DATA/modeler_cache.out"
}

# Doubtful models and predictions on Extra-P's own test data, with and
# without their coded warning (bench/bench_audit.c, `make audit`).
warning_audit() {
    if ! measure "$DATA/audit.out" "$B/bench_audit" tests/data/extrap-audit; then
        fail audit "$ru"; return
    fi
    grep -v '^#' "$DATA/audit.out"
    while read -r line; do
        say "audit: $(jget modeler "$line" | tr -d '"') $(jget category "$line" | tr -d '"'):" \
            "$(jget problems "$line") problems, $(jget warned "$line") warned, $(jget silent "$line") silent"
    done <<EOF_AUDIT
$(grep '^{' "$DATA/audit.out")
EOF_AUDIT
}

# The robust modeler against Extra-P's on generated sets with known truth
# (bench/bench_robust.c): accuracy, interval coverage and time, same run.
robust_modeler() {
    if ! measure "$DATA/robust_modeler.out" "$B/bench_robust" --series1 2000 --series2 300 \
        --seeds 11,22,33,44,55 --min-time 1; then
        fail robust_modeler "$ru"; return
    fi
    cat "$DATA/robust_modeler.out"
    while read -r line; do
        case "$(jget figure "$line")" in
        *robust_modeler*)
            say "robust_modeler: $(jget set "$line" | tr -d '"') $(jget modeler "$line" | tr -d '"'):" \
                "term recovery $(jget term_recovery "$line"), p90 $(jget extrapolation_ape_p90 "$line") %," \
                "95% interval coverage of a new measurement $(jget interval_coverage_measured "$line")," \
                "of the true value $(jget interval_coverage "$line")," \
                "mean width $(jget interval_mean_width_pct "$line") %, $(jget us_per_model "$line") us/model;" \
                "interval_unreliable on $(jget interval_unreliable_share "$line") of the models, new measurement" \
                "outside the interval $(jget miss_rate_warned "$line") with it, $(jget miss_rate_unwarned "$line") without" ;;
        *robust_vs_extrap*)
            say "robust_vs_extrap: $(jget set "$line" | tr -d '"'): p90 ratio $(jget p90_ratio "$line")," \
                "recovery +$(jget recovery_gain_points "$line") points, time ratio $(jget time_ratio "$line");" \
                "targets: accuracy $(jget accuracy_target_met "$line"), time $(jget time_target_met "$line")," \
                "coverage $(jget coverage_target_met "$line")" ;;
        esac
    done <"$DATA/robust_modeler.out"
}

# Both modelers on every series of Extra-P's own test data
# (tests/data/extrap-audit, bench/bench_modeler_audit.c): impossible predictions up to
# 8x the data, the largest point left out and predicted, order dependence.
modeler_audit() {
    if ! measure "$DATA/modeler_audit.out" "$B/bench_modeler_audit" $(find tests/data/extrap-audit -type f ! -name LICENSE | sort); then
        fail modeler_audit "$ru"; return
    fi
    grep '"figure": "modeler_audit"' "$DATA/modeler_audit.out"
    while read -r line; do
        case "$line" in
        *'"figure": "modeler_audit"'*)
            say "modeler_audit: $(jget modeler "$line" | tr -d '"') on $(jget series "$line") series of Extra-P's test data:" \
                "impossible time up to $(jget horizon "$line")x in $(jget impossible "$line")," \
                "largest point left out outside the 95% interval $(jget loo_missed "$line") of $(jget loo_tested "$line")" \
                "(one parameter $(jget loo_missed_1p "$line") of $(jget loo_tested_1p "$line"))," \
                "order-dependent answers $(jget order_dependent "$line"), two regimes $(jget two_regimes "$line")," \
                "interval_unreliable on $(jget loo_warned "$line") left-out fits ($(jget loo_missed_warned "$line") of the missed)" ;;
        esac
    done <"$DATA/modeler_audit.out"
}

# accuracy PARAMS NOISE CALLPATHS SEED
accuracy() {
    params=$1 noise=$2 n=$3 seed=$4
    base=$DATA/accuracy_p${params}_n$noise
    if ! measure "$base.gen" "$B/gen_pmnf" "$base" --callpaths "$n" --params "$params" \
        --noise "$noise" --reps 5 --seed "$seed"; then
        fail accuracy "$ru"; return
    fi
    if ! measure "$base.models" "$PERFCAST" model "$base.txt" --json; then
        fail accuracy "$ru"; return
    fi
    if ! measure "$base.score" "$B/score_models" "$base.truth.json" "$base.models"; then
        fail accuracy "$ru"; return
    fi
    s=$(cat "$base.score")
    printf '{"figure": "accuracy", "params": %s, "noise": %s, "seed": %s, %s\n' \
        "$params" "$noise" "$seed" "${s#\{}"
    say "accuracy: $params param(s), noise $noise: term recovery $(jget term_recovery "$s")," \
        "extrapolation APE median $(jget extrapolation_ape_median "$s") %," \
        "p90 $(jget extrapolation_ape_p90 "$s") % ($(jget missing "$s") of $n missing)"
}

# `perfcast ingest` on a generated Kineto trace of BENCH_INGEST_MB (default
# 500) MB of JSON, plain and gzip (bench/bench_ingest.c).
ingest() {
    mb=${BENCH_INGEST_MB:-500}
    if ! measure "$DATA/ingest.out" "$B/bench_ingest" --mb "$mb" --dir "$DATA" --perfcast "$PERFCAST"; then
        cat "$DATA/ingest.out" 2>/dev/null | grep '"error"'
        fail ingest "$ru"; return
    fi
    cat "$DATA/ingest.out"
    while read -r line; do
        say "$(jget figure "$line" | tr -d '"'): $(jget json_mb "$line") MB of JSON" \
            "($(jget file_mb "$line") MB file, $(jget events "$line") events) in $(jget wall_s "$line") s =" \
            "$(jget mb_per_s "$line") MB/s, peak RSS $(jget max_rss_mb "$line") MB;" \
            "$(jget speedup_vs_hta "$line")x HTA (12.1 MB/s), $(jget fraction_of_target "$line")x the 200 MB/s" \
            "target; the 35 MB trace would take $(jget seconds_for_35mb "$line") s"
    done <"$DATA/ingest.out"
}

# perfcast's own JSON profile format: a rows-heavy profile of
# BENCH_PROFILE_JSON_MB (default 40) MiB read in-process (bench/bench_ingest.c
# --pj-mb): MB/s and the peak RSS growth of the parse per body MiB.
ingest_profile_json() {
    mb=${BENCH_PROFILE_JSON_MB:-40}
    if ! measure "$DATA/ingest_pj.out" "$B/bench_ingest" --no-kineto --pj-mb "$mb" --dir "$DATA"; then
        fail ingest_profile_json "$ru"; return
    fi
    cat "$DATA/ingest_pj.out"
    line=$(grep '"ingest_profile_json"' "$DATA/ingest_pj.out")
    say "ingest_profile_json: $(jget body_mib "$line") MiB, $(jget values "$line") metric values in" \
        "$(jget parse_s "$line") s = $(jget mb_per_s "$line") MB/s; peak RSS growth" \
        "$(jget rss_growth_mb "$line") MB = $(jget growth_per_body_mb "$line") x the body"
}

# The service against a private PostgreSQL (bench/bench_http.c): start-up,
# GET /health under wrk, experiment creation, and the read endpoints next to
# nginx serving a file of the same size (7 x 2 wrk runs of 10 s: the step
# gets 200 s more than the others).
http_service() {
    if ! command -v wrk >/dev/null 2>&1; then
        say "read endpoints vs nginx: skipped, wrk is not installed (apt-get install wrk)"
    elif ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
        say "read endpoints vs nginx: skipped, nginx is not installed (apt-get install nginx-light)"
    fi
    limit_was=$LIMIT; LIMIT=$((LIMIT + 200))
    if ! measure "$DATA/http.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_http"; then
        LIMIT=$limit_was
        cat "$DATA/http.out" 2>/dev/null | grep '"error"'
        fail http_service "$ru"; return
    fi
    LIMIT=$limit_was
    cat "$DATA/http.out"
    while read -r line; do
        case $(jget figure "$line") in
        *http_startup*) say "http_startup: serve to listening in $(jget start_ms_median "$line") ms" \
            "(median of 5, max $(jget start_ms_max "$line")), SIGTERM to exit $(jget stop_ms_median "$line") ms" ;;
        *http_health*) say "http_health: $(jget requests_per_s "$line") req/s, p50 $(jget p50_ms "$line") ms," \
            "p99 $(jget p99_ms "$line") ms ($(jget tool "$line" | tr -d '"'))" ;;
        *http_create*) say "http_create: $(jget requests_per_s "$line") POST /v1/experiments per s, one at a" \
            "time, p50 $(jget p50_ms "$line") ms, p99 $(jget p99_ms "$line") ms" ;;
        *read_endpoints*) say "read endpoints vs nginx: skipped, $(jget skipped "$line" | tr -d '"')" ;;
        *read_*)
            ratio=$(jget ratio_to_nginx "$line"); p99=$(jget p99_ms "$line")
            verdict=$(awk "BEGIN { print ($ratio >= 0.5 && $p99 <= 10) ? \"meets\" : \"misses\" }")
            say "$(jget figure "$line" | tr -d '"'): $(jget requests_per_s "$line") req/s, p99 $p99 ms;" \
                "nginx (same-size static file, same run) $(jget nginx_requests_per_s "$line") req/s," \
                "p99 $(jget nginx_p99_ms "$line") ms: ${ratio}x nginx ($verdict >= 0.5x and p99 <= 10 ms;" \
                "$(jget tool "$line" | tr -d '"'), $(jget bytes "$line") bytes)" ;;
        esac
    done <"$DATA/http.out"
}

# Uploads of a 200-callpath x 8-rank x 5-step profile (bench/bench_upload.c).
upload_service() {
    if ! measure "$DATA/upload.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_upload"; then
        cat "$DATA/upload.out" 2>/dev/null | grep '"error"'
        fail upload_service "$ru"; return
    fi
    cat "$DATA/upload.out"
    while read -r line; do
        say "$(jget figure "$line" | tr -d '"'): $(jget uploads_per_s "$line") uploads/s from" \
            "$(jget clients "$line") client(s) ($(jget rows_per_s "$line") rows/s), p50" \
            "$(jget p50_ms "$line") ms, p99 $(jget p99_ms "$line") ms"
    done <"$DATA/upload.out"
}

# From uploads to models, then predict and the model list under wrk
# (bench/bench_models.c).
model_service() {
    if ! measure "$DATA/models.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_models"; then
        cat "$DATA/models.out" 2>/dev/null | grep '"error"'
        fail model_service "$ru"; return
    fi
    cat "$DATA/models.out"
    while read -r line; do
        case $(jget figure "$line") in
        *service_refit*) say "service_refit: $(jget uploads "$line") uploads ($(jget mb_uploaded "$line") MB) to" \
            "models ready in $(jget upload_to_models_s "$line") s, $(jget after_last_upload_s "$line") s after the last upload" ;;
        *service_predict*) say "service_predict: $(jget requests_per_s "$line") req/s, p99 $(jget p99_ms "$line") ms" \
            "($(jget tool "$line" | tr -d '"'); target >= 30000 req/s, p99 <= 10 ms)" ;;
        *service_models*) say "service_models: $(jget requests_per_s "$line") req/s, p99 $(jget p99_ms "$line") ms" \
            "($(jget tool "$line" | tr -d '"'), 100 models a page)" ;;
        esac
    done <"$DATA/models.out"
}

# The analysis endpoints under wrk at 16 connections (bench/bench_analyses.c):
# configurations over 1,000 candidates, imbalance for 200 callpaths,
# bottlenecks, scaling, cost; repeated requests (answers kept per model set)
# and requests that all differ (computed and rendered each time).
analyses_service() {
    if ! measure "$DATA/analyses.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_analyses" \
        --wrk-connections 16; then
        cat "$DATA/analyses.out" 2>/dev/null | grep '"error"'
        fail analyses_service "$ru"; return
    fi
    cat "$DATA/analyses.out"
    while read -r line; do
        fig=$(jget figure "$line" | tr -d '"')
        case $fig in
        analyses_setup) say "analyses_setup: $(jget callpaths "$line") callpaths x $(jget ranks "$line") ranks," \
            "models in $(jget upload_to_models_s "$line") s; first answers build the per-set data" ;;
        analyses_cold_load) say "analyses_cold_load: first predict after a drop, $(jget points "$line") points:" \
            "balanced $(jget median_ms "$(jget balanced "$line")") ms, imbalanced" \
            "$(jget median_ms "$(jget imbalanced "$line")") ms (median), warm $(jget warm_median_ms "$line") ms" ;;
        analyses_*)
            p99=$(jget p99_ms "$line")
            verdict=$(awk "BEGIN { print ($p99 <= 20) ? \"meets\" : \"misses\" }")
            say "$fig: $(jget requests_per_s "$line") req/s, p50 $(jget p50_ms "$line") ms, p99 $p99 ms" \
                "($(jget tool "$line" | tr -d '"'); $verdict the p99 <= 20 ms target)" ;;
        esac
    done <"$DATA/analyses.out"
}

# The service against hostile clients (bench/bench_hostile.c): six anonymous
# 512 MiB uploads, 1,100 slow connections while /health is probed, an upload
# over the callpath cap and a refit just under it.
hostile_service() {
    if ! measure "$DATA/hostile.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_hostile"; then
        cat "$DATA/hostile.out" 2>/dev/null | grep '"error"'
        fail hostile_service "$ru"; return
    fi
    cat "$DATA/hostile.out"
    while read -r line; do
        case $(jget figure "$line") in
        *hostile_anonymous*) say "hostile_anonymous: $(jget answered_401 "$line") of $(jget uploads "$line")" \
            "anonymous 512 MiB uploads answered 401 after at most $(jget most_body_mb_taken "$line") MB of body;" \
            "server RSS growth $(jget rss_growth_mb "$line") MB (target <= 64)" ;;
        *hostile_slowloris*) say "hostile_slowloris: $(jget answered_within_2s "$line") of $(jget probes "$line")" \
            "/health probes answered within 2 s among $(jget slow_connections "$line") slow connections;" \
            "p50 $(jget p50_ms "$line") ms, worst $(jget worst_ms "$line") ms ($(jget p50_vs_baseline "$line")x the p50 before)" ;;
        *hostile_callpaths*) say "hostile_callpaths: over the cap of $(jget cap "$line"): $(jget over_cap_status "$line");" \
            "just under: refit $(jget job_state "$line" | tr -d '"') in $(jget refit_s "$line") s, peak RSS" \
            "$(jget rss_peak_mb "$line") MB (target <= 1024), after/before $(jget after_vs_before "$line") (target <= 2)" ;;
        esac
    done <"$DATA/hostile.out"
}

# Repetition statistics and Taguchi sensitivity of 10,000 coordinates x 10
# repetitions (computed, and answered over HTTP), and advice-guided
# measurement against the full grid on generated ground truth
# (bench/bench_sweep.c).
sweep_figures() {
    [ -x "$B/bench_sweep" ] || { fail sweep "$B/bench_sweep is not built"; return; }
    if ! measure "$DATA/sweep.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_sweep"; then
        fail sweep "$ru"; return
    fi
    cat "$DATA/sweep.out"
    while read -r line; do
        case $(jget figure "$line" | tr -d '"') in
        sweep_stats) say "sweep_stats: $(jget ms "$line") ms for $(jget coordinates "$line") coordinates x" \
                "$(jget repetitions "$line") repetitions ($(jget ratio_to_target "$line") of the 50 ms target;" \
                "$(jget speedup_vs_baseline "$line")x the uncached GSL baseline)" ;;
        sweep_advice) say "sweep_advice: advice/grid core-hours to 10% error at 8x the largest point," \
                "median $(jget median_ratio "$line") over $(jget workloads "$line") workloads (goal <= 0.5;" \
                "range $(jget min_ratio "$line")..$(jget max_ratio "$line"); reached 10%: advice" \
                "$(jget advice_reached_10pct "$line"), grid $(jget grid_reached_10pct "$line"));" \
                "worst ratio $(jget worst_ratio "$line"), $(jget workloads_over_1 "$line") workloads costlier" \
                "than the grid (must be 0)" ;;
        sweep_service) say "sweep_service: over HTTP, statistics of 10,000 coordinates $(jget statistics_ms "$line") ms" \
                "($(jget statistics_bytes "$line") bytes), sensitivity $(jget sensitivity_ms "$line") ms (target 50 ms)" ;;
        esac
    done <"$DATA/sweep.out"
}

# Configurations and advice at their caps, on the HTTP thread, against the
# same requests over one candidate (bench/bench_caps.c).
caps_figures() {
    [ -x "$B/bench_caps" ] || { fail caps "$B/bench_caps is not built"; return; }
    if ! measure "$DATA/caps.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_caps"; then
        fail caps "$ru"; return
    fi
    cat "$DATA/caps.out"
    while read -r line; do
        say "$(jget figure "$line" | tr -d '"'): $(jget ms "$line") ms at $(jget candidates "$line")" \
            "candidates ($(jget ratio_to_baseline "$line")x one candidate, $(jget ratio_to_target "$line")" \
            "of the 100 ms the HTTP thread may take)"
    done <"$DATA/caps.out"
}

# One coordinate's aggregation with Eq. 1's absent = 0 (bench/bench_aggregate.c).
aggregate() {
    if ! measure "$DATA/aggregate.out" "$B/bench_aggregate" --min-time 1; then
        fail aggregate "$ru"; return
    fi
    cat "$DATA/aggregate.out"
    line=$(cat "$DATA/aggregate.out")
    say "aggregate: $(jget dense_rows "$line") rows in $(jget dense_ms "$line") ms" \
        "($(jget dense_rows_per_s "$line") rows/s); sparse (absent = 0) $(jget sparse_vs_dense "$line")x," \
        "mean $(jget mean_vs_median "$line")x the dense median's time"
}

# Per-iteration analysis (bench/bench_iteration.c): replay accuracy of the
# critical path on the real traces, and the analysis of a generated 35 MB
# trace beside the plain ingest of the same file.
iteration() {
    if ! measure "$DATA/iteration.out" "$B/bench_iteration" --dir "$DATA"; then
        cat "$DATA/iteration.out" 2>/dev/null | grep '"error"'
        fail iteration "$ru"; return
    fi
    cat "$DATA/iteration.out"
    while read -r line; do
        case $(jget figure "$line" | tr -d '"') in
        iteration_replay)
            say "iteration_replay: $(jget trace "$line" | tr -d '"'): geometric mean error" \
                "$(jget replay_geomean_error "$line") (replay), $(jget paper_geomean_error "$line")" \
                "(paper's overhead treatment); goal 0.05" ;;
        iteration_speed)
            say "iteration_speed: $(jget json_mb "$line") MB analysed in $(jget analysis_s "$line") s =" \
                "$(jget analysis_mb_per_s "$line") MB/s wall, $(jget analysis_cpu_mb_per_s "$line") MB/s" \
                "of CPU; $(jget ratio_to_ingest "$line")x the plain ingest; peak RSS" \
                "$(jget analysis_max_rss_mb "$line") MB (goals 150 MB/s, 128 MB)" ;;
        esac
    done <"$DATA/iteration.out"
}

# Real H200 traces with step times measured without the profiler
# (bench/bench_gputrace.c, tests/data/gpu and the four runs of
# tests/data/gpu-h200b, a second host whose profiler costs less per event,
# the fourth with Python stacks recorded, and tests/data/gpu-h100, an H100):
# the unprofiled step, the replay, and the step at a batch size with no
# trace, by operator beside the former kernel-name method in the same run,
# and by operator with the given traces' measured steps calibrating the
# profiler's cost.
gputrace() {
    : >"$DATA/gputrace.out"
    for set in tests/data/gpu tests/data/gpu-h200b/run1 tests/data/gpu-h200b/run2 \
               tests/data/gpu-h200b/run3 tests/data/gpu-h200b/stack tests/data/gpu-h100; do
        if ! measure "$DATA/gputrace.one" "$B/bench_gputrace" --dir "$set"; then
            fail gputrace "$ru"; continue
        fi
        cat "$DATA/gputrace.one" >>"$DATA/gputrace.out"
    done
    cat "$DATA/gputrace.out"
    while read -r line; do
        set=$(jget set "$line" | tr -d '"')
        case $(jget figure "$line" | tr -d '"') in
        gpu_unprofiled_all|gpu_replay_all)
            say "$(jget figure "$line" | tr -d '"') ($set): geometric mean error" \
                "$(jget geomean_error "$line") over $(jget traces "$line") traces" \
                "(goal $(jget goal "$line"))" ;;
        gpu_unprofiled_interval)
            say "gpu_unprofiled_interval ($set): $(jget inside "$line") of $(jget traces "$line")" \
                "traces and $(jget unprofiled_steps_inside "$line") of" \
                "$(jget unprofiled_steps "$line") unprofiled steps inside, median half-width" \
                "$(jget median_half_width "$line")" ;;
        gpu_batch_all)
            say "gpu_batch_all ($set; by operator, then by kernel name): $line" ;;
        esac
    done <"$DATA/gputrace.out"
}

# The asynchronous-SGD simulator (bench/bench_simulate.c): an Inception-v3-sized
# step graph, W = 1..32, M = 1 and 2; goal: the whole sweep <= 1 s on one core.
simulate_sweep() {
    if ! measure "$DATA/simulate.out" "$B/bench_simulate"; then
        fail simulate_sweep "$ru"; return
    fi
    cat "$DATA/simulate.out"
    while read -r line; do
        case $(jget figure "$line") in
        *simulate_sweep_m*) ;;
        *) say "$(jget figure "$line" | tr -d '"'): $(jget events "$line") events in $(jget cpu_s "$line") s of CPU" \
            "($(jget wall_s "$line") s wall; $(jget events_per_cpu_s "$line") events/s; goal 1 s)," \
            "$(jget cpu_over_simulated "$line") s per simulated second" ;;
        esac
    done <"$DATA/simulate.out"
}

# Memory per simulator and sweep job kind at its cap (bench/bench_simmem.c): a
# 1,000,000-operation step graph uploaded and run (then three more times: what
# the server keeps against its level before), a sweep plan of 98,304 runs
# against a 4,096-run plan (the baseline, same run); budget 256 MB above the
# server's level, back to it after.
simulate_memory() {
    if ! measure "$DATA/simmem.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_simmem"; then
        fail simulate_memory "$ru"; return
    fi
    cat "$DATA/simmem.out"
    while read -r line; do
        say "$(jget figure "$line" | tr -d '"'): peak +$(jget peak_growth_mb "$line") MB" \
            "(budget 256 MB), $(jget retained_mb "$line") MB kept after" \
            "($(jget retained_anon_mb "$line") MB data, $(jget retained_file_mb "$line") MB program pages)"
    done <"$DATA/simmem.out"
}

# Memory per job kind at its cap, the kinds bench_simmem does not cover
# (bench/bench_jobmem.c): a 1,000,000-event Kineto trace uploaded, refitted and
# analysed, against a trace of 1/100 of the events; a refit of 200,000 callpaths
# x 5 uploads, against 20,000 (each baseline in the same run).
job_memory() {
    [ -x "$B/bench_jobmem" ] || { fail job_memory "$B/bench_jobmem is not built"; return; }
    limit_was=$LIMIT; LIMIT=${BENCH_JOBMEM_TIMEOUT:-900}
    if ! measure "$DATA/jobmem.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_jobmem"; then
        LIMIT=$limit_was
        fail job_memory "$ru"; return
    fi
    LIMIT=$limit_was
    cat "$DATA/jobmem.out"
    while read -r line; do
        say "$(jget figure "$line" | tr -d '"'): peak +$(jget peak_growth_mb "$line") MB," \
            "$(jget retained_mb "$line") MB kept after; $(jget growth_vs_baseline "$line")x the" \
            "baseline's growth for $(jget size_vs_baseline "$line")x its size"
    done <"$DATA/jobmem.out"
}

# What the dashboard and CI ask, one request at a time (bench/bench_dashboard.c):
# curves, the regression check of two commits of 200 callpaths, the static
# files, against predict as the baseline.
dashboard_service() {
    if ! measure "$DATA/dashboard.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_dashboard"; then
        cat "$DATA/dashboard.out" 2>/dev/null | grep '"error"'
        fail dashboard_service "$ru"; return
    fi
    cat "$DATA/dashboard.out"
    while read -r line; do
        fig=$(jget figure "$line" | tr -d '"')
        case $fig in
        dashboard_setup) ;;
        dashboard_*) say "$fig: p50 $(jget p50_ms "$line") ms, p90 $(jget p90_ms "$line") ms," \
            "$(jget bytes "$line") bytes, $(jget p50_vs_predict "$line")x predict's p50" ;;
        esac
    done <"$DATA/dashboard.out"
}

# Refits and large uploads (bench/bench_refit.c): 5 points x 8 ranks of 200
# callpaths posted by 8 clients, from the last acknowledged upload to its
# job done, against one refit of the same data alone; the server's peak and
# after-job RSS for a refit just under the callpath cap; RSS growth for a
# 64 MiB upload.
refit_service() {
    [ -x "$B/bench_refit" ] || { fail refit_service "$B/bench_refit is not built"; return; }
    # three servers' worth of uploads and refits: more than one step's default time
    limit_was=$LIMIT; LIMIT=${BENCH_REFIT_TIMEOUT:-360}
    if ! measure "$DATA/refit.out" env PERFCAST_BIN="$PERFCAST" "$B/bench_refit"; then
        LIMIT=$limit_was
        cat "$DATA/refit.out" 2>/dev/null | grep '"error"'
        fail refit_service "$ru"; return
    fi
    LIMIT=$limit_was
    cat "$DATA/refit.out"
    while read -r line; do
        case $(jget figure "$line") in
        *upload_to_models*) say "upload_to_models: $(jget uploads "$line") uploads by $(jget clients "$line") clients" \
            "in $(jget jobs "$line") refits; last acknowledged upload to models in $(jget last_ack_to_done_s "$line") s" \
            "(target <= 1 s), $(jget ratio_to_refit_alone "$line")x one refit of the data alone ($(jget refit_alone_s "$line") s)" ;;
        *refit_memory*) say "refit_memory: $(jget callpaths "$line") callpaths x $(jget uploads "$line") uploads:" \
            "refit $(jget job_state "$line" | tr -d '"') in $(jget refit_s "$line") s, peak RSS $(jget rss_peak_mb "$line") MB" \
            "($(jget peak_growth_mb "$line") MB over $(jget rss_before_mb "$line")), after/before $(jget after_vs_before "$line")" ;;
        *upload_large*) say "upload_large: $(jget body_mb "$line") MiB upload $(jget status "$line")," \
            "stored intact $(jget stored_intact "$line"); peak RSS growth $(jget peak_growth_mb "$line") MB" \
            "($(jget growth_vs_body "$line")x the body), heap (RssAnon) growth $(jget anon_growth_mb "$line") MB" ;;
        esac
    done <"$DATA/refit.out"
}

# The shortest-decimal printer every JSON answer uses (bench/bench_numtext.c):
# ns per value against the previous implementation in the same run, on
# statistics, short decimals and random bit patterns; byte-for-byte equal on
# 20 million values (any difference fails the step).
numtext_shortest() {
    [ -x "$B/bench_numtext" ] || { fail numtext_shortest "$B/bench_numtext is not built"; return; }
    if ! measure "$DATA/numtext.out" "$B/bench_numtext"; then
        fail numtext_shortest "$ru"; return
    fi
    cat "$DATA/numtext.out"
    line=$(cat "$DATA/numtext.out")
    say "numtext_shortest: statistics $(jget stats_ns "$line") ns/value vs $(jget stats_reference_ns "$line")" \
        "($(jget stats_speedup "$line")x; goal 3x), short decimals $(jget short_speedup "$line")x," \
        "random bits $(jget random_speedup "$line")x; $(jget mismatches "$line") of $(jget verified "$line") differ"
}

# Score-P Cube read throughput (bench/bench_cube.c): MB/s of one large .cubex,
# profiles/s of a generated set of 1,000 runs, beside perfcast's Extra-P text
# reader on the same values and, when EXTRAP_SRC and PYCUBEXR_SRC name checkouts
# of github extra-p/extrap (4.2.5) and extra-p/pycubexr that python3 can import
# (numpy, marshmallow, tqdm, packaging), Extra-P's CubeFileReader2 on 50 of
# the runs; peak RSS.
cube() {
    [ -x "$B/bench_cube" ] || { fail cube "$B/bench_cube is not built"; return; }
    set -- --dir "$DATA"
    if [ -n "${EXTRAP_SRC:-}" ] && [ -n "${PYCUBEXR_SRC:-}" ]; then
        set -- "$@" --extrap "$EXTRAP_SRC" --pycubexr "$PYCUBEXR_SRC"
    fi
    if ! measure "$DATA/cube.out" "$B/bench_cube" "$@"; then
        fail cube "$ru"; return
    fi
    cat "$DATA/cube.out"
    line=$(cat "$DATA/cube.out")
    say "cube: one .cubex of $(jget big_bytes "$line") bytes at $(jget big_mb_per_s "$line") MB/s;" \
        "a set of $(jget runs "$line") runs at $(jget set_profiles_per_s "$line") profiles/s," \
        "$(jget ratio_vs_text "$line")x the text reader on the same values," \
        "Extra-P $(jget extrap_profiles_per_s "$line") profiles/s (ratio $(jget ratio_vs_extrap "$line"));" \
        "peak RSS $(jget max_rss_mb "$ru") MB"
}

for src in bench/*.c; do
    tool=$(basename "$src" .c)
    [ -x "$B/$tool" ] || { echo "bench: $B/$tool is not built (make bench builds it)" >&2; exit 2; }
done
[ -x "$PERFCAST" ] || echo "bench: $PERFCAST is not built; its figures will fail" >&2

machine
speed speed_1param 1 100000 101 76.9 100000
speed speed_2param 2 10000 102 40 20000
modeler_cache
robust_modeler
modeler_audit
warning_audit
accuracy 1 0.05 2000 201
accuracy 1 0.15 2000 202
accuracy 2 0.05 2000 203
accuracy 2 0.15 2000 204
ingest
ingest_profile_json
http_service
upload_service
model_service
analyses_service
hostile_service
sweep_figures
caps_figures
aggregate
iteration
gputrace
simulate_sweep
simulate_memory
job_memory
dashboard_service
refit_service
numtext_shortest
cube

echo
cat "$summary"
exit $failed
