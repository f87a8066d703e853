#!/bin/sh
# test_cli_iteration.sh — `perfcast iteration` as a user runs it: the table
# and the --json document of the real Kineto traces (gzip and plain), an
# overhead set written with --save-overheads and read back with --overheads,
# a what-if table, and invalid input: exit status 2 and one line on stderr
# naming the event, the field or the entry. Ends with "N passed, N failed".
cd "$(dirname "$0")/.." || exit 2
. tests/cli_lib.sh
D=tests/data/kineto

expect "table" 0 "ProfilerStep#4" "$BIN" iteration $D/nccl_ws2_rank0.json.gz
expect "table: breakdown" 0 "communication" "$BIN" iteration $D/ddp128_rank0.json.gz
expect "table: outliers dropped" 0 "host time dropped as outliers of its overheads (T1-T5): 283.975 ms per step, 46.6% of a measured step at most" "$BIN" iteration $D/ddp128_rank0.json.gz
expect "table: the outliers_dropped warning" 0 "warning: outliers_dropped: host time dropped as outliers of its overheads (T1-T5) is 41.1% of a measured step" "$BIN" iteration $D/ddp128_rank1.json.gz
expect "json" 0 '"geomean_error"' "$BIN" iteration $D/nccl_ws2_rank0.json.gz --json
expect "json: three steps" 0 '"label":"ProfilerStep#6"' "$BIN" iteration $D/nccl_ws2_rank0.json.gz --json
gunzip -c $D/alexnet_single.json.gz >"$TMP/alexnet.json"
expect "plain JSON, no steps" 0 "(whole trace)" "$BIN" iteration "$TMP/alexnet.json"
expect "save overheads" 0 "ProfilerStep#551" "$BIN" iteration $D/ddp128_rank0.json.gz --save-overheads "$TMP/ov.json"
if grep -q '"stats"' "$TMP/ov.json" 2>/dev/null; then ok; else bad "no overhead set written"; fi
expect "read overheads" 0 "overheads: file" "$BIN" iteration $D/ddp128_rank1.json.gz --overheads "$TMP/ov.json"
printf '{"aten::batch_norm": {"scale": 0.5}}' >"$TMP/kt.json"
printf '{"stats":[]}' >"$TMP/empty-set.json"
expect "an empty overhead set: every lookup 0" 0 "overheads: file" "$BIN" iteration $D/nccl_ws2_rank0.json.gz --overheads "$TMP/empty-set.json"
expect "what-if" 0 '"kernels_changed":' "$BIN" iteration $D/nccl_ws2_rank0.json.gz --kernel-times "$TMP/kt.json" --json

# each step's interval from its own trace, and the line saying what it is made of, in each case
expect "interval: the profiler term" 0 "^95% interval of each predicted step (the steps' spread 1.2% over 3 steps: +-5.8%; profiler overhead from none to 4 us per CPU event or the host 4x as fast: +6.0% / -65.0%; outliers kept: +6.1%; Algorithm 1's error on this trace 0.1%):" "$BIN" iteration $D/nccl_ws2_rank0.json.gz
expect "interval: each step's ends" 0 "^  ProfilerStep#4 .* 198.601 ms  \[68.972, 227.373\]" "$BIN" iteration $D/nccl_ws2_rank0.json.gz
expect "interval: a set, no profiler term" 0 "^95% interval .*; the profiler overhead the set subtracted; outliers kept: +[0-9.]*%; Algorithm" "$BIN" iteration $D/ddp128_rank1.json.gz --overheads "$TMP/ov.json"
expect "interval: the CPU figure 0, the GPU's 4 us" 0 "^95% interval .*; no CPU profiler overhead subtracted (GPU 4 us); outliers kept" "$BIN" iteration $D/nccl_ws2_rank0.json.gz --cpu-overhead 0
expect "interval: the replay" 0 "^95% interval .*+-5.8%; no profiler overhead subtracted; Algorithm 1's error on this trace 0.1%):" "$BIN" iteration $D/nccl_ws2_rank0.json.gz --cpu-overhead 0 --gpu-overhead 0 --keep-outliers
expect "interval: one step, none" 0 "^warning: no_interval: the trace has fewer than 2 steps" "$BIN" iteration "$TMP/alexnet.json"
expect "interval: floored" 0 "^  lower ends raised to the step with no host overhead" "$BIN" iteration tests/data/gpu/dlrm_bs1024.json.gz
# a device-bound step (a 900 us kernel) and a host-only one: only the first lower end is floored
printf '{"traceEvents":[{"ph":"X","cat":"user_annotation","name":"ProfilerStep#1","pid":1,"tid":1,"ts":0,"dur":1000},{"ph":"X","cat":"cpu_op","name":"A","pid":1,"tid":1,"ts":0,"dur":20},{"ph":"X","cat":"cuda_runtime","name":"cudaLaunchKernel","pid":1,"tid":1,"ts":5,"dur":5,"args":{"correlation":1}},{"ph":"X","cat":"kernel","name":"K","pid":0,"tid":7,"ts":12,"dur":900,"args":{"correlation":1,"stream":7}},{"ph":"X","cat":"cuda_runtime","name":"cudaDeviceSynchronize","pid":1,"tid":1,"ts":25,"dur":890,"args":{"correlation":2}},{"ph":"X","cat":"user_annotation","name":"ProfilerStep#2","pid":1,"tid":1,"ts":1000,"dur":300},{"ph":"X","cat":"cpu_op","name":"B","pid":1,"tid":1,"ts":1000,"dur":300}]}' >"$TMP/partial.json"
expect "interval: one of two floored, said so" 0 "^  the lower end of 1 of 2 steps raised to the step with no host overhead" "$BIN" iteration "$TMP/partial.json"

expect "modelled by operator" 0 '"modelled":{"method":"operators","at":4' "$BIN" iteration $D/ddp128_rank0.json.gz --value 1 --trace-at 2=$D/ddp128_rank1.json.gz --at 4 --json
expect "modelled: interval" 0 '"interval":\[' "$BIN" iteration $D/ddp128_rank0.json.gz --value 1 --trace-at 2=$D/ddp128_rank1.json.gz --at 4 --json
G=tests/data/gpu
refuse "traces of two devices" 'resnet18_bs32_a100.json.gz: different devices: trace 1 ran on NVIDIA A100-SXM4-80GB (compute capability 8.0, 79.3 GiB), trace 0 on NVIDIA H200 (compute capability 9.0, 139.8 GiB)' "$BIN" iteration $G/resnet18_bs16.json.gz --value 16 --trace-at 32=$G/resnet18_bs32_a100.json.gz --at 64
expect "two devices with --mixed-devices" 0 '"code":"mixed_devices"' "$BIN" iteration $G/resnet18_bs16.json.gz --value 16 --trace-at 32=$G/resnet18_bs32_a100.json.gz --at 64 --mixed-devices --json
# the header gives the interval's two ends (8.851 ms in [3.646, 12.224]: 1 - 3.646/8.851 = 58.8%,
# 12.224/8.851 - 1 = 38.1%), the host's and the model's symmetric part beside them; where they agree, one figure
expect "batch header: the interval's two ends" 0 "at 4096; 95% interval -58\.8% / +38\.1% (the host and the model +-27\.7%):$" "$BIN" iteration $G/dlrm_bs2048.json.gz --value 2048 --trace-at 512=$G/dlrm_bs512.json.gz --trace-at 1024=$G/dlrm_bs1024.json.gz --trace-at 8192=$G/dlrm_bs8192.json.gz --trace-at 16384=$G/dlrm_bs16384.json.gz --at 4096
expect "batch header: by kernel name" 0 "95% interval -61\.0% / +39\.7%: every kernel at its end, with the host's +-27\.9%:$" "$BIN" iteration $G/dlrm_bs2048.json.gz --value 2048 --trace-at 512=$G/dlrm_bs512.json.gz --trace-at 1024=$G/dlrm_bs1024.json.gz --trace-at 8192=$G/dlrm_bs8192.json.gz --trace-at 16384=$G/dlrm_bs16384.json.gz --at 4096 --by-kernel-names
expect "batch header: symmetric" 0 "at 512; 95% interval +-6\.4%:$" "$BIN" iteration $G/resnet18_bs256.json.gz --value 256 --trace-at 16=$G/resnet18_bs16.json.gz --trace-at 32=$G/resnet18_bs32.json.gz --trace-at 64=$G/resnet18_bs64.json.gz --trace-at 128=$G/resnet18_bs128.json.gz --at 512
expect "lower end floored at the device's part" 0 "lower end raised to the device's part of the step: 4\.80[0-9] ms (5\.088 ms with no host overhead" "$BIN" iteration $G/dlrm_bs4096.json.gz --value 4096 --trace-at 512=$G/dlrm_bs512.json.gz --trace-at 1024=$G/dlrm_bs1024.json.gz --trace-at 2048=$G/dlrm_bs2048.json.gz --at 8192
# steps measured without the profiler (truth.json's medians) calibrate the profiler's cost
A="$G/dlrm_bs2048.json.gz --value 2048 --trace-at 512=$G/dlrm_bs512.json.gz --trace-at 1024=$G/dlrm_bs1024.json.gz --trace-at 8192=$G/dlrm_bs8192.json.gz --trace-at 16384=$G/dlrm_bs16384.json.gz --at 4096"
M="--measured 512=5.7121 --measured 1024=10.0423 --measured 2048=9.0208 --measured 8192=8.2539 --measured 16384=10.2137"
expect "calibrated: the line" 0 "^  profiler's cost calibrated on 5 traces measured without the profiler: [0-9.]* us per CPU event (of 0 to 8); their own steps predicted\( [-+][0-9.]*%\)\{5\}; their spread +-[0-9.]*% of a host-made step, +-[0-9.]*% of this one$" "$BIN" iteration $A $M
expect "calibrated: in place of the profiler term" 0 "^  the calibration's spread joined to the above in place of the profiler term$" "$BIN" iteration $A $M
expect "calibrated: one trace keeps the profiler term" 0 "their own steps predicted [-+][0-9.]*%; one trace gives no spread: the profiler term stays$" "$BIN" iteration $A --measured 512=5.7121
expect "calibrated: json" 0 '"calibration":{"traces":5,"cpu_profiler_us":' "$BIN" iteration $A $M --json
usage_error "--measured at no traced value" '--measured 999: no trace at that value' "$BIN" iteration $A --measured 999=5
usage_error "--measured twice" '--measured 512: given twice' "$BIN" iteration $A --measured 512=5 --measured 512=6
usage_error "--measured not > 0" '--measured takes VALUE=MS' "$BIN" iteration $A --measured 512=-1
usage_error "--measured without --at" '--measured goes with --at' "$BIN" iteration $G/dlrm_bs2048.json.gz --measured 512=5
usage_error "--measured with --overheads" 'does not combine with --overheads' "$BIN" iteration $A --measured 512=5 --overheads "$TMP/ov.json"
usage_error "--mixed-devices without --at" '--mixed-devices goes with --at' "$BIN" iteration $G/resnet18_bs16.json.gz --mixed-devices
usage_error "--at without traces" '--at needs' "$BIN" iteration $D/ddp128_rank0.json.gz --at 4
usage_error "--trace-at malformed" 'VALUE=TRACE' "$BIN" iteration $D/ddp128_rank0.json.gz --value 1 --trace-at $D/ddp128_rank1.json.gz --at 4
refuse "two traces at one value" 'same value' "$BIN" iteration $D/ddp128_rank0.json.gz --value 1 --trace-at 1=$D/ddp128_rank1.json.gz --at 4
refuse "two --trace-at at one value: the later file named" "^perfcast iteration: $G/resnet18_bs16.json.gz: the same value 32 as trace 1" "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 32=$G/resnet18_bs32.json.gz --trace-at 32=$G/resnet18_bs16.json.gz --at 128
refuse "one file twice at two values" "^perfcast iteration: $G/resnet18_bs64.json.gz: the same trace as trace 0" "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 32=$G/resnet18_bs64.json.gz --at 128
refuse "an --at the models cannot reach" '^perfcast iteration: --at: .*no finite' "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 32=$G/resnet18_bs32.json.gz --at 1e20
usage_error "--at not a number" '--at must be a number > 0' "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 32=$G/resnet18_bs32.json.gz --at nan
usage_error "--at 0" '--at must be a number > 0' "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 32=$G/resnet18_bs32.json.gz --at 0
head -c 100000 $G/resnet18_bs32.json.gz >"$TMP/cut32.json.gz"
refuse "a truncated gzip --trace-at" "cut32.json.gz: gzip data ends early" "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 32=$TMP/cut32.json.gz --at 128
: >"$TMP/empty.json"
refuse "an empty --trace-at" "empty.json: the input is empty" "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 32=$TMP/empty.json --at 128
refuse "another model's trace named" "dlrm_bs512.json.gz: not the same job" "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 512=$G/dlrm_bs512.json.gz --at 128
refuse "another model's trace named by kernel names" "dlrm_bs512.json.gz: not the same job" "$BIN" iteration $G/resnet18_bs64.json.gz --value 64 --trace-at 512=$G/dlrm_bs512.json.gz --trace-at 32=$G/resnet18_bs32.json.gz --at 128 --by-kernel-names
printf '{"no_such_kernel": 1e-6}' >"$TMP/none.json"
refuse "what-if naming nothing" 'kernel_times\["no_such_kernel"\]' "$BIN" iteration $D/nccl_ws2_rank0.json.gz --kernel-times "$TMP/none.json"
printf '{"k": "fast"}' >"$TMP/str.json"
refuse "what-if not seconds" 'kernel_times\["k"\]' "$BIN" iteration $D/nccl_ws2_rank0.json.gz --kernel-times "$TMP/str.json"
printf '{"traceEvents":[{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":-3,"args":{"correlation":1}}]}' >"$TMP/neg.json"
refuse "negative dur" 'traceEvents\[0\].*dur' "$BIN" iteration "$TMP/neg.json"
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"a","ts":0,"dur":9},{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":3,"args":{"stream":7}}]}' >"$TMP/nocorr.json"
refuse "no correlation ids" 'traceEvents\[1\].*correlation' "$BIN" iteration "$TMP/nocorr.json"
printf '{"traceEvents":[' >"$TMP/cut.json"
refuse "truncated" 'byte' "$BIN" iteration "$TMP/cut.json"
refuse "no file" 'No such file' "$BIN" iteration "$TMP/absent.json"
refuse "no set" 'DATABASE_URL' env -u DATABASE_URL "$BIN" iteration $D/nccl_ws2_rank0.json.gz --overheads no-such-platform
expect "efficiency on a built-in device" 0 '47.20% of peak' "$BIN" iteration $D/flops_small.json --device A100
printf '{"name":"MI250X","peak_flops":{"fp64":47.9e12,"fp32":47.9e12,"tf32":47.9e12,"fp16":383e12},"dram_bandwidth":3.2e12}' >"$TMP/dev.json"
expect "efficiency on a device file" 0 '"name":"MI250X"' "$BIN" iteration $D/flops_small.json --device "$TMP/dev.json" --json
expect "no FLOP counts said" 0 'no FLOP counts' "$BIN" iteration $D/nccl_ws2_rank0.json.gz --device H100
printf '{"name":"x","peak_flops":{"fp64":1,"fp32":1,"tf32":0,"fp16":1},"dram_bandwidth":1}' >"$TMP/baddev.json"
refuse "a device peak of 0" 'peak_flops.tf32' "$BIN" iteration $D/flops_small.json --device "$TMP/baddev.json"
refuse "an unknown device" 'no such built-in device' "$BIN" iteration $D/flops_small.json --device B200
printf '{"traceEvents":[{"ph":"X","cat":"cpu_op","name":"aten::mm","ts":0,"dur":9,"args":{"flops":-5}}]}' >"$TMP/negflops.json"
refuse "negative flops" 'traceEvents\[0\].*flops' "$BIN" iteration "$TMP/negflops.json"
usage_error "usage" 'TRACE is missing' "$BIN" iteration
usage_error "bad flag value" 'cpu-overhead' "$BIN" iteration $D/nccl_ws2_rank0.json.gz --cpu-overhead -1

cli_summary
