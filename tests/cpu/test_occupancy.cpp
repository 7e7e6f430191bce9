// The by-hand occupancy calculator (sm_90 rules), and the parsers of ncu CSV and cuobjdump SASS.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <string>

#if KLAB_HAS_CUDA
#include <cuda_occupancy.h>  // NVIDIA's calculator: the reference for the sweep below
#endif

#include "klab/harness/kernel_capture.hpp"
#include "klab/harness/occupancy.hpp"
#include "klab/harness/profiler/all.hpp"

namespace {

using klab::KernelResources;
using klab::Limiter;
using klab::Occupancy;

Occupancy occ(int threads, int regs, int64_t static_smem = 0, int64_t dynamic_smem = 0,
              int carveout = -1) {
  KernelResources k;
  k.block_threads = threads;
  k.regs_per_thread = regs;
  k.static_smem = static_smem;
  k.dynamic_smem = dynamic_smem;
  k.carveout_pct = carveout;
  return klab::compute_occupancy(k);
}

bool has(const Occupancy& o, Limiter l) {
  return std::find(o.limiters.begin(), o.limiters.end(), l) != o.limiters.end();
}

}  // namespace

// 256 threads = 8 warps per block throughout; an SM has 4 sub-partitions of 16384 registers.
TEST(Occupancy, RegistersAt256Threads) {
  // 32 regs: 32*32 = 1024 regs/warp; 16384/1024 = 16 warps per sub-partition = 64 per SM = 8
  // blocks. Threads (2048/256) and warps (64/8) also allow 8: a three-way tie at 100%.
  Occupancy o = occ(256, 32);
  EXPECT_EQ(o.blocks_per_sm, 8);
  EXPECT_EQ(o.by_registers, 8);
  EXPECT_DOUBLE_EQ(o.occupancy, 1.0);
  EXPECT_TRUE(has(o, Limiter::threads) && has(o, Limiter::warps) && has(o, Limiter::registers));

  // 64 regs: 2048/warp -> 8 warps per sub-partition -> 32 per SM -> 4 blocks, 50%.
  o = occ(256, 64);
  EXPECT_EQ(o.blocks_per_sm, 4);
  EXPECT_EQ(o.limiter(), Limiter::registers);
  EXPECT_EQ(o.limiters.size(), 1u);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.5);

  // 128 regs: 4096/warp -> 4 per sub-partition -> 16 per SM -> 2 blocks, 25%.
  o = occ(256, 128);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limiter(), Limiter::registers);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.25);

  // 255 regs: 255*32 = 8160, rounded up to 8192/warp -> 2 per sub-partition -> 8 per SM -> 1 block.
  o = occ(256, 255);
  EXPECT_EQ(o.regs_per_warp, 8192);
  EXPECT_EQ(o.blocks_per_sm, 1);
  EXPECT_EQ(o.limiter(), Limiter::registers);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.125);
}

TEST(Occupancy, RegisterAllocationGranularity) {
  // 33 regs: 1056/warp rounds up to 1280 -> floor(16384/1280) = 12 warps per sub-partition
  // -> 48 per SM -> 6 blocks (a count that ignores the rounding would say 65536/(33*256) = 7).
  Occupancy o = occ(256, 33);
  EXPECT_EQ(o.regs_per_warp, 1280);
  EXPECT_EQ(o.blocks_per_sm, 6);
  EXPECT_EQ(o.limiter(), Limiter::registers);

  // 72 regs, 128 threads (4 warps): 2304/warp -> floor(16384/2304) = 7 warps per sub-partition
  // (whole warps only) -> 28 per SM -> 7 blocks.
  o = occ(128, 72);
  EXPECT_EQ(o.blocks_per_sm, 7);
  EXPECT_EQ(o.active_warps, 28);
}

TEST(Occupancy, SharedMemoryLimited) {
  // 48 KiB dynamic + 1 KiB reserved = 50176 B per block; 228 KiB = 233472 B; 233472/50176 =
  // 4.65 -> 4 blocks (registers alone would allow 8). Four blocks need 200704 B = the 196 KiB
  // carveout.
  Occupancy o = occ(256, 32, 0, 48 * 1024);
  EXPECT_EQ(o.smem_per_block, 50176);
  EXPECT_EQ(o.blocks_per_sm, 4);
  EXPECT_EQ(o.limiter(), Limiter::shared_memory);
  EXPECT_EQ(o.limiters.size(), 1u);
  EXPECT_EQ(o.smem_config, 228 * 1024);
  EXPECT_EQ(o.smem_config_needed, 196 * 1024);

  // Static + reserved rounds up to the 128-byte unit: 1000 + 1024 = 2024 -> 2048.
  EXPECT_EQ(occ(256, 32, 1000).smem_per_block, 2048);
}

TEST(Occupancy, CarveoutPreference) {
  // 64 threads, 16 regs, 10 KiB static: 11264 B per block. The default (largest) carveout
  // holds floor(233472/11264) = 20 blocks; a 50% preference (116736 B) rounds up to the 132 KiB
  // step = 135168 B, which holds 12. Threads (32), warps (32), blocks (32), registers (64) allow more.
  EXPECT_EQ(occ(64, 16, 10 * 1024).blocks_per_sm, 20);
  Occupancy o = occ(64, 16, 10 * 1024, 0, 50);
  EXPECT_EQ(o.smem_config, 132 * 1024);
  EXPECT_EQ(o.blocks_per_sm, 12);
  EXPECT_EQ(o.limiter(), Limiter::shared_memory);
  // A preference too small for one block is overridden by the smallest carveout that fits it.
  o = occ(64, 16, 40 * 1024, 0, 0);
  EXPECT_EQ(o.smem_config, 64 * 1024);  // 41 KiB per block needs the 64 KiB step
  EXPECT_EQ(o.blocks_per_sm, 1);
}

TEST(Occupancy, BlockCountLimited) {
  // 32 threads (1 warp), 16 regs, no shared memory: threads allow 64, warps 64, registers
  // (512/warp -> 32 per sub-partition -> 128 warps) 128, shared memory 228 (1 KiB reserved
  // each), but an SM takes at most 32 blocks: 32 warps = 50%.
  Occupancy o = occ(32, 16);
  EXPECT_EQ(o.blocks_per_sm, 32);
  EXPECT_EQ(o.limiters, std::vector<Limiter>{Limiter::blocks});
  EXPECT_EQ(o.by_smem, 228);
  EXPECT_DOUBLE_EQ(o.occupancy, 0.5);
}

TEST(Occupancy, ThreadsLimited) {
  // 1024 threads, 16 regs: 2048/1024 = 2 blocks by threads (and by warps, 64/32); registers
  // would allow 128 warps = 4 blocks.
  Occupancy o = occ(1024, 16);
  EXPECT_EQ(o.blocks_per_sm, 2);
  EXPECT_EQ(o.limiter(), Limiter::threads);
  EXPECT_FALSE(has(o, Limiter::registers));
  EXPECT_EQ(o.by_registers, 4);

  // 97 threads occupy 4 warps: warps allow 64/4 = 16 blocks, threads alone 2048/97 = 21.
  o = occ(97, 16);
  EXPECT_EQ(o.by_threads, 21);
  EXPECT_EQ(o.blocks_per_sm, 16);
  EXPECT_EQ(o.limiters, std::vector<Limiter>{Limiter::warps});
}

TEST(Occupancy, LaunchesThatCannotRun) {
  EXPECT_FALSE(occ(1025, 32).invalid.empty());
  EXPECT_FALSE(occ(256, 256).invalid.empty());                // > 255 registers per thread
  EXPECT_FALSE(occ(1024, 128).invalid.empty());               // 131072 registers per block
  EXPECT_FALSE(occ(128, 32, 0, 228 * 1024).invalid.empty());  // > 227 KiB per block
  EXPECT_TRUE(occ(128, 32, 0, 227 * 1024).invalid.empty());   // exactly the opt-in maximum
  EXPECT_EQ(occ(128, 32, 0, 227 * 1024).blocks_per_sm, 1);
  EXPECT_EQ(occ(1024, 64).blocks_per_sm, 1);  // 65536 registers: just fits
}

#if KLAB_HAS_CUDA
// NVIDIA's own occupancy calculator (header-only, host code) as the independent reference:
// every block size, register count, shared-memory size and carveout of a broad sweep agrees.
TEST(Occupancy, AgreesWithCudaOccupancyHeader) {
  cudaOccDeviceProp p;
  p.computeMajor = 9;
  p.computeMinor = 0;
  p.maxThreadsPerBlock = 1024;
  p.maxThreadsPerMultiprocessor = 2048;
  p.regsPerBlock = 65536;
  p.regsPerMultiprocessor = 65536;
  p.warpSize = 32;
  p.sharedMemPerBlock = 48 * 1024;
  p.sharedMemPerMultiprocessor = 228 * 1024;
  p.numSms = 132;
  p.sharedMemPerBlockOptin = 227 * 1024;
  p.reservedSharedMemPerBlock = 1024;
  int cases = 0;
  for (int threads : {1, 32, 33, 96, 97, 128, 192, 256, 384, 512, 640, 1000, 1024})
    for (int regs = 1; regs <= 255; regs += 7)
      for (int64_t st : {0, 1000, 16384})
        for (int64_t dyn : {0, 4096, 40000, 49152, 100000, 200000, 227 * 1024})
          for (int carveout : {-1, 0, 25, 50, 100}) {
            cudaOccFuncAttributes a;
            a.maxThreadsPerBlock = 1024;
            a.numRegs = regs;
            a.sharedSizeBytes = static_cast<size_t>(st);
            a.partitionedGCConfig = PARTITIONED_GC_OFF;
            a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
            a.maxDynamicSharedSizeBytes = static_cast<int>(227 * 1024 - st);
            a.numBlockBarriers = 1;
            cudaOccDeviceState state;
            state.carveoutConfig = carveout;
            cudaOccResult ref;
            const bool ok =
                cudaOccMaxActiveBlocksPerMultiprocessor(
                    &ref, &p, &a, &state, threads, static_cast<size_t>(dyn)) == CUDA_OCC_SUCCESS;
            const Occupancy o = occ(threads, regs, st, dyn, carveout);
            const int mine = o.invalid.empty() ? o.blocks_per_sm : 0;
            ASSERT_EQ(mine, ok ? ref.activeBlocksPerMultiprocessor : -1)
                << threads << " threads, " << regs << " regs, " << st << "+" << dyn
                << " B smem, carveout " << carveout;
            ++cases;
          }
  EXPECT_GT(cases, 40000);
}
#endif

// ---- ncu CSV ----

namespace {

// What `ncu --csv --page raw --log-file F` writes: tool messages, the header, the units row,
// one row per profiled launch; kernel names with commas inside quotes; thousands separators.
constexpr const char* kNcuSample =
    R"ncu(==PROF== Connected to process 4242 (/work/main/build/apps/klab/klab)
==PROF== Profiling "sgemm_2d_blocktile" - 0: 0%....50%....100% - 9 passes
the program's own output, with, commas
==PROF== Disconnected from process 4242
"ID","Process ID","Process Name","Host Name","Kernel Name","Block Size","Grid Size","dram__bytes_read.sum","lts__t_sector_hit_rate.pct","smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio","smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio","smsp__average_warps_issue_stalled_wait_per_issue_active.ratio","note"
"","","","","","","","byte","%","ratio","ratio","ratio",""
"0","4242","klab","127.0.0.1","void klab::sgemm::k<128, 64>(klab::sgemm::GemmArgs)","(256, 1, 1)","(32, 32, 1)","5,376","87.50","3.5","12.25","1,024.5","say ""hi"""
"1","4242","klab","127.0.0.1","void klab::sgemm::k<128, 64>(klab::sgemm::GemmArgs)","(256, 1, 1)","(32, 32, 1)","1,234,567","n/a","0","0.5","0.25",""
==PROF== Report: done
)ncu";

}  // namespace

TEST(NcuCsv, Numbers) {
  EXPECT_EQ(klab::parse_ncu_number("5,376"), 5376.0);
  EXPECT_EQ(klab::parse_ncu_number("1,234,567.5"), 1234567.5);
  EXPECT_EQ(klab::parse_ncu_number(" 0.5 "), 0.5);
  EXPECT_EQ(klab::parse_ncu_number("-2"), -2.0);
  EXPECT_EQ(klab::parse_ncu_number("1e+03"), 1000.0);
  EXPECT_FALSE(klab::parse_ncu_number(""));
  EXPECT_FALSE(klab::parse_ncu_number("n/a"));
  EXPECT_FALSE(klab::parse_ncu_number("(256, 1, 1)"));
  EXPECT_FALSE(klab::parse_ncu_number("12,34"));  // not a thousands separator
  EXPECT_FALSE(klab::parse_ncu_number("1,2345"));
}

TEST(NcuCsv, QuotedFields) {
  const auto rows = klab::parse_csv("a,\"b,c\",\"d \"\"e\"\"\"\n\"x\ny\",,z\n");
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"a", "b,c", "d \"e\""}));
  EXPECT_EQ(rows[1], (std::vector<std::string>{"x\ny", "", "z"}));
}

TEST(NcuCsv, RawPage) {
  const klab::NcuReport r = klab::parse_ncu_csv(kNcuSample);
  ASSERT_EQ(r.columns.size(), 13u);
  ASSERT_EQ(r.rows.size(), 2u);
  EXPECT_EQ(r.messages.size(), 4u);
  EXPECT_EQ(r.units.at("dram__bytes_read.sum"), "byte");
  const klab::NcuRow& k0 = r.rows[0];
  EXPECT_EQ(k0.text("Kernel Name"), "void klab::sgemm::k<128, 64>(klab::sgemm::GemmArgs)");
  EXPECT_EQ(k0.text("Block Size"), "(256, 1, 1)");
  EXPECT_EQ(k0.number("dram__bytes_read.sum"), 5376.0);
  EXPECT_EQ(k0.number("lts__t_sector_hit_rate.pct"), 87.5);
  EXPECT_EQ(k0.text("note"), "say \"hi\"");
  EXPECT_FALSE(k0.number("no_such_metric"));
  EXPECT_EQ(r.rows[1].number("dram__bytes_read.sum"), 1234567.0);
  EXPECT_FALSE(r.rows[1].number("lts__t_sector_hit_rate.pct"));

  const auto top =
      klab::top_metrics(k0, "smsp__average_warps_issue_stalled_", "_per_issue_active.ratio", 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].first, "wait");
  EXPECT_EQ(top[0].second, 1024.5);
  EXPECT_EQ(top[1].first, "long_scoreboard");
}

TEST(NcuCsv, NoTable) {
  const klab::NcuReport r = klab::parse_ncu_csv("==ERROR== ERR_NVGPUCTRPERM - no permission\n");
  EXPECT_TRUE(r.rows.empty());
  ASSERT_EQ(r.messages.size(), 1u);
}

TEST(NcuCsv, MetricList) {
  const auto names = klab::parse_ncu_metric_list(
      "Device NVIDIA H200\n-------- ----\nMetric Name   Metric Description\n"
      "dram__bytes            # of bytes accessed in DRAM\n"
      "smsp__average_warps_issue_stalled_barrier_per_issue_active  ratio of ...\n");
  EXPECT_EQ(names,
            (std::vector<std::string>{
                "dram__bytes", "smsp__average_warps_issue_stalled_barrier_per_issue_active"}));
  EXPECT_EQ(klab::metric_base_name("dram__bytes_read.sum"), "dram__bytes_read");
  EXPECT_EQ(klab::metric_base_name("launch__registers_per_thread"), "launch__registers_per_thread");
}

// ---- cuobjdump ----

namespace {

// cuobjdump -sass prints absolute branch targets; nvdisasm prints labels. Both appear here.
constexpr const char* kSassSample = R"sass(
Fatbin elf code:
================
arch = sm_90a
identifier = /work/main/kernels/x/v01_demo.cu

	code for sm_90a
		Function : _Z4demoPKfPfi
	.headerflags	@"EF_CUDA_64BIT_ADDRESS EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                     /* 0x00000a00ff017b82 */
                                                                              /* 0x000fe20000000800 */
        /*0010*/                   HFMA2.MMA R3, -RZ, RZ, 0, 0 ;              /* 0x00000000ff037435 */
        /*0020*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0030*/                   LDG.E R8, desc[UR4][R2.64+0x10] ;
        /*0040*/                   STS.128 [R0], R4 ;
        /*0050*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0060*/                   LDS.64 R10, [R0+0x8] ;
        /*0070*/                   FFMA R12, R10, R11, R12 ;
        /*0080*/                   FFMA R12, R10, R8, R12 ;
        /*0090*/              @!P0 BRA 0x20 ;
        /*00a0*/                   STG.E.64 desc[UR4][R2.64], R12 ;
        /*00b0*/                   EXIT ;
        /*00c0*/                   BRA 0xc0;
        /*00d0*/                   NOP;
		..........

		Function : _Z5otherv
.L_x_0:
        /*0000*/                   LDSM.16.M88.4 R4, [R2] ;
        /*0010*/                   HMMA.16816.F32.BF16 R8, R4, R6, R8 ;
        /*0020*/                   LDGSTS.E.BYPASS.LTC128B.128 [R1], desc[UR4][R2.64] ;
        /*0030*/                   MUFU.EX2 R9, R9 ;
        /*0040*/              @P0 BRA `(.L_x_0) ;
        /*0050*/                   EXIT ;
Fatbin elf code:
)sass";

}  // namespace

TEST(Sass, ParseAndClassify) {
  const auto fns = klab::parse_sass(kSassSample);
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].name, "_Z4demoPKfPfi");
  EXPECT_EQ(klab::demangle(fns[0].name), "demo(float const*, float*, int)");
  ASSERT_EQ(fns[0].instrs.size(), 14u);
  EXPECT_EQ(fns[0].instrs[2].opcode, "LDG.E.128");
  EXPECT_EQ(fns[0].instrs[9].opcode, "BRA");
  EXPECT_EQ(fns[0].instrs[9].target_offset, 0x20);

  EXPECT_EQ(klab::classify_sass("LDG.E.128").row, "LDG.128");
  EXPECT_EQ(klab::classify_sass("LDG.E").row, "LDG.32");
  EXPECT_EQ(klab::classify_sass("LDG.E.U16.CONSTANT").row, "LDG.16");
  EXPECT_EQ(klab::classify_sass("STG.E.64").group, "global store");
  EXPECT_EQ(klab::classify_sass("LDGSTS.E.BYPASS.LTC128B.128").row, "LDGSTS.128");
  EXPECT_EQ(klab::classify_sass("LDSM.16.M88.4").row, "LDSM.x4");
  EXPECT_EQ(klab::classify_sass("HGMMA.64x128x16.F32.BF16").group, "math");
  EXPECT_EQ(klab::classify_sass("HFMA2.MMA").group, "other");  // a move idiom, not math
  EXPECT_EQ(klab::classify_sass("STL.64").group, "local (spill)");
}

TEST(Sass, Summary) {
  const auto fns = klab::parse_sass(kSassSample);
  const klab::SassSummary s = klab::summarize_sass(fns[0], 64);
  EXPECT_EQ(s.instructions, 13);  // the NOP is not counted
  auto row = [&](const std::string& name) {
    auto it =
        std::find_if(s.rows.begin(), s.rows.end(), [&](const auto& r) { return r.name == name; });
    return it == s.rows.end() ? 0 : it->count;
  };
  EXPECT_EQ(row("LDG.128"), 1);
  EXPECT_EQ(row("LDG.32"), 1);
  EXPECT_EQ(row("STS.128"), 1);
  EXPECT_EQ(row("LDS.64"), 1);
  EXPECT_EQ(row("FFMA"), 2);
  EXPECT_EQ(row("STG.64"), 1);
  EXPECT_EQ(row("BAR"), 1);
  EXPECT_EQ(row("BRA"), 2);
  EXPECT_EQ(s.rows.front().group, "global load");  // display order: loads first
  // The loop runs from the first load (0x20, index 2) to the backward branch (index 9); the
  // branch-to-self after EXIT is not a loop.
  ASSERT_EQ(s.loops.size(), 1u);
  EXPECT_EQ(s.loops[0].head, 2);
  EXPECT_EQ(s.loops[0].tail, 9);
  auto region = [&](const std::string& g) {
    auto it = std::find_if(s.regions.begin(), s.regions.end(),
                           [&](const auto& r) { return r.group == g; });
    return it == s.regions.end() ? klab::SassSummary::Region{} : *it;
  };
  EXPECT_EQ(region("global load").first, 2);
  EXPECT_EQ(region("global load").last, 3);
  EXPECT_EQ(region("math").first, 7);
  EXPECT_EQ(region("global store").first, 10);
  EXPECT_EQ(s.strip, "..GGSBSMM.W...");

  const klab::SassSummary t = klab::summarize_sass(fns[1], 64);
  ASSERT_EQ(t.loops.size(), 1u);  // the label form
  EXPECT_EQ(t.loops[0].head, 0);
  EXPECT_EQ(t.loops[0].tail, 4);

  // One iteration of the loop, indices 2..9: 8 instructions, 2 of them math.
  ASSERT_TRUE(s.main_loop.has_value());
  EXPECT_EQ(s.main_loop->instructions, 8);
  EXPECT_EQ(s.main_loop->math, 2);
  EXPECT_EQ(s.main_loop->top_math, "FFMA");
  EXPECT_EQ(s.main_loop->shared, 2);
  EXPECT_EQ(s.main_loop->global, 2);
  EXPECT_EQ(s.main_loop->barrier, 1);
  EXPECT_EQ(s.main_loop->special, 0);
  ASSERT_TRUE(t.main_loop.has_value());
  EXPECT_EQ(t.main_loop->top_math, "HMMA");
  EXPECT_EQ(t.main_loop->special, 1);  // the MUFU.EX2, not math: the XU pipe's
}

// A warp-specialised kernel: the retry of an mbarrier wait sits after EXIT and branches back
// to before the k loop, so the largest backward branch (0x30..0xd0) is not the main loop; the
// loop with the most math on its fall-through path (0x50..0x80) is.
TEST(Sass, MainLoopIsTheLoopDoingTheMostMath) {
  const auto fns = klab::parse_sass(R"sass(
		Function : _Z2wsv
        /*0000*/                   MOV R1, R2 ;
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2], R3 ;
        /*0020*/              @!P0 BRA 0xb0 ;
        /*0030*/                   LDS.128 R4, [R2] ;
        /*0040*/                   ISETP.GE.AND P1, PT, R1, R2, PT ;
        /*0050*/                   FFMA R3, R4, R5, R3 ;
        /*0060*/                   FFMA R6, R4, R5, R6 ;
        /*0070*/                   LDS.128 R4, [R2] ;
        /*0080*/              @!P1 BRA 0x50 ;
        /*0090*/                   STG.E [R8.64], R3 ;
        /*00a0*/                   EXIT ;
        /*00b0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2], R3 ;
        /*00c0*/              @!P0 BRA 0xb0 ;
        /*00d0*/                   BRA 0x30 ;
)sass");
  ASSERT_EQ(fns.size(), 1u);
  const klab::SassSummary s = klab::summarize_sass(fns[0], 16);
  ASSERT_EQ(s.loops.size(), 3u);
  ASSERT_TRUE(s.main_loop.has_value());
  EXPECT_EQ(s.main_loop->instructions, 4);  // 0x50 .. 0x80
  EXPECT_EQ(s.main_loop->math, 2);
  EXPECT_EQ(s.main_loop->shared, 1);
}

// A persistent wgmma kernel: the tile loop (0x10..0x80) holds an mbarrier wait and the k loop
// (0x30..0x60); a split reduction's FADD loop (0x90..0xd0) does the most math, so it is the main
// loop; the tensor loop is the innermost whose path issues HGMMA: the k loop, 2 of its 4.
TEST(Sass, TensorLoopIsTheInnermostIssuingTensorInstructions) {
  const auto fns = klab::parse_sass(R"sass(
		Function : _Z7persistv
        /*0000*/                   MOV R1, R2 ;
        /*0010*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [R2], R3 ;
        /*0020*/              @!P0 BRA 0x10 ;
        /*0030*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24 ;
        /*0040*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR8], R24 ;
        /*0050*/                   WARPGROUP.ARRIVE ;
        /*0060*/              @!P1 BRA 0x30 ;
        /*0070*/                   STG.E [R8.64], R24 ;
        /*0080*/              @!P2 BRA 0x10 ;
        /*0090*/                   FADD R3, R4, R3 ;
        /*00a0*/                   FADD R5, R6, R5 ;
        /*00b0*/                   FADD R7, R8, R7 ;
        /*00c0*/                   FADD R9, R10, R9 ;
        /*00d0*/              @!P3 BRA 0x90 ;
        /*00e0*/                   EXIT ;
)sass");
  ASSERT_EQ(fns.size(), 1u);
  const klab::SassSummary s = klab::summarize_sass(fns[0], 16);
  ASSERT_EQ(s.loops.size(), 4u);
  ASSERT_TRUE(s.main_loop.has_value());
  EXPECT_EQ(s.main_loop->top_math, "FADD");
  EXPECT_EQ(s.main_loop->tensor, 0);
  ASSERT_TRUE(s.tensor_loop.has_value());
  EXPECT_EQ(s.tensor_loop->head, 3);  // 0x30 .. 0x60, not the tile loop 0x10 .. 0x80
  EXPECT_EQ(s.tensor_loop->tail, 6);
  EXPECT_EQ(s.tensor_loop->instructions, 4);
  EXPECT_EQ(s.tensor_loop->tensor, 2);
  EXPECT_EQ(s.tensor_loop->barrier, 1);
  EXPECT_EQ(s.tensor_loop->inner_loops, 0);
  EXPECT_TRUE(klab::is_tensor_sass("HGMMA.64x128x16.F32.BF16"));
  EXPECT_TRUE(klab::is_tensor_sass("HMMA.16816.F32.BF16"));
  EXPECT_FALSE(klab::is_tensor_sass("HFMA2.MMA"));
  // No loop issues tensor-core instructions: no tensor loop.
  const auto plain = klab::parse_sass(kSassSample);
  EXPECT_FALSE(klab::summarize_sass(plain[0], 16).tensor_loop.has_value());
  EXPECT_TRUE(klab::summarize_sass(plain[1], 16).tensor_loop.has_value());  // the HMMA loop
}

// The main loop's path follows unconditional branches over code it does not run (an edge
// path), and leaves out instructions predicated on !PT (never executed).
TEST(Sass, MainLoopPathSkipsTheEdgePath) {
  const auto fns = klab::parse_sass(R"sass(
		Function : _Z4pathv
        /*0000*/                   MOV R1, R2 ;
        /*0010*/                   FFMA R3, R4, R5, R3 ;
        /*0020*/               @P1 BRA 0x60 ;
        /*0030*/                   LDGSTS.E [R6], desc[UR4][R8.64] ;
        /*0040*/              @!PT LDS RZ, [RZ] ;
        /*0050*/                   BRA 0x90 ;
        /*0060*/                   ISETP.GE.AND P2, PT, R1, R2, PT ;
        /*0070*/                   SEL R8, R8, R9, P2 ;
        /*0080*/                   LDGSTS.E [R6], desc[UR4][R8.64], P2 ;
        /*0090*/                   FFMA R3, R4, R5, R3 ;
        /*00a0*/              @!P0 BRA 0x10 ;
        /*00b0*/                   EXIT ;
)sass");
  ASSERT_EQ(fns.size(), 1u);
  const klab::SassSummary s = klab::summarize_sass(fns[0], 16);
  ASSERT_TRUE(s.main_loop.has_value());
  // 0x10, 0x20, 0x30, (0x40 never), 0x50 -> 0x90, 0xa0: 6 instructions, 2 FFMA, 1 copy.
  EXPECT_EQ(s.main_loop->instructions, 6);
  EXPECT_EQ(s.main_loop->math, 2);
  EXPECT_EQ(s.main_loop->global, 1);
  EXPECT_EQ(s.main_loop->shared, 0);
  EXPECT_EQ(s.main_loop->inner_loops, 0);
}

// FFMAs on the main loop's path with a bank conflict by the two-bank model: three register-file
// reads in one bank (register % 2), where a source the previous FFMA marked .reuse in the same
// slot comes from the reuse cache and a register read twice counts once.
TEST(Sass, MainLoopCountsFfmaBankConflicts) {
  const auto fns = klab::parse_sass(R"sass(
		Function : _Z5banksv
        /*0000*/                   FFMA R3, R4, R6, R8 ;
        /*0010*/                   FFMA R3, R4.reuse, R6, R8 ;
        /*0020*/                   FFMA R5, R4, R10, R12 ;
        /*0030*/                   FFMA R5, R4, R10, R12 ;
        /*0040*/                   FFMA R7, R1, R2, R9 ;
        /*0050*/                   FFMA R7, -R2, R2, R4 ;
        /*0060*/                   FFMA R7, R2, 0.5, R4 ;
        /*0070*/                   FFMA R9, R2.reuse, R6, R8 ;
        /*0080*/                   FADD R3, R4, R8 ;
        /*0090*/                   FFMA R9, R2, R6, R8 ;
        /*00a0*/              @!P0 BRA 0x0 ;
        /*00b0*/                   EXIT ;
)sass");
  ASSERT_EQ(fns.size(), 1u);
  const klab::SassSummary s = klab::summarize_sass(fns[0], 16);
  ASSERT_TRUE(s.main_loop.has_value());
  EXPECT_EQ(s.main_loop->ffma, 9);
  // 0x00: R4, R6, R8 all even: a conflict. 0x10: the same (nothing cached yet; its own flag only
  // caches R4 for the next one). 0x20: R4 from the cache, two reads left: none. 0x30: R4 read
  // again (0x20 cached nothing): R4, R10, R12 all even, a conflict. 0x40: R1, R2, R9 mixed. 0x50:
  // R2 twice is one read. 0x60: an immediate, two reads. 0x70: R2, R6, R8 all even (nothing
  // cached): a conflict. 0x90: the FADD in between flushed 0x70's cached R2: a conflict again.
  EXPECT_EQ(s.main_loop->ffma_bank_conflicts, 5);
}

// A loop nested in the main one is walked once and reported; an EXIT on the path means the walk
// did not stay in the loop, so no iteration is claimed.
TEST(Sass, MainLoopPathReportsInnerLoops) {
  const auto nested = klab::parse_sass(R"sass(
		Function : _Z6nestedv
        /*0000*/                   MOV R1, R2 ;
        /*0010*/                   LDS.128 R4, [R0] ;
        /*0020*/                   FFMA R3, R4, R5, R3 ;
        /*0030*/              @P1 BRA 0x20 ;
        /*0040*/                   BAR.SYNC.DEFER_BLOCKING 0x0 ;
        /*0050*/              @!P0 BRA 0x10 ;
        /*0060*/                   EXIT ;
)sass");
  ASSERT_EQ(nested.size(), 1u);
  const klab::SassSummary s = klab::summarize_sass(nested[0], 16);
  ASSERT_TRUE(s.main_loop.has_value());
  EXPECT_EQ(s.main_loop->instructions, 5);  // 0x10 .. 0x50, the inner body once
  EXPECT_EQ(s.main_loop->inner_loops, 1);

  const auto exits = klab::parse_sass(R"sass(
		Function : _Z5exitsv
        /*0000*/                   FFMA R3, R4, R5, R3 ;
        /*0010*/                   EXIT ;
        /*0020*/              @!P0 BRA 0x0 ;
)sass");
  ASSERT_EQ(exits.size(), 1u);
  EXPECT_FALSE(klab::summarize_sass(exits[0], 16).main_loop.has_value());
}

TEST(Sass, Symbols) {
  const auto syms = klab::parse_cuobjdump_symbols(
      "identifier = /work/main/kernels/sgemm/v05_2d_blocktile.cu\n\nsymbols:\n"
      "STT_FUNC         STB_LOCAL  STO_ENTRY      _Z3fooPf\n"
      "STT_OBJECT       STB_WEAK   STV_DEFAULT  U .nv.reservedSmem.offset0\n"
      "identifier = /work/main/kernels/sgemm/v06_vectorized.cu\n"
      "STT_FUNC         STB_GLOBAL STO_ENTRY      _Z3barv\n");
  ASSERT_EQ(syms.size(), 2u);
  EXPECT_EQ(syms[0].name, "_Z3fooPf");
  EXPECT_EQ(syms[0].source, "/work/main/kernels/sgemm/v05_2d_blocktile.cu");
  EXPECT_EQ(syms[1].source, "/work/main/kernels/sgemm/v06_vectorized.cu");

  // The newer format (cuobjdump 13.5): the same entries; objects and aliases are not kernels.
  const auto newer = klab::parse_cuobjdump_symbols(
      "identifier = ../kernels/elementwise/v01_naive.cu\nsymbols:\n"
      "FUNC          LOCAL   DEFAULT    ENTRY                                _Z3fooPf\n"
      "OBJECT        WEAK    DEFAULT    -                                 U  .nv.reservedSmem\n"
      "NOTYPE        WEAK    DEFAULT    RESERVED_SHARED                      __nv_reserved\n"
      "FUNC          GLOBAL  DEFAULT    -                                    _Z6helperv\n");
  ASSERT_EQ(newer.size(), 1u);
  EXPECT_EQ(newer[0].name, "_Z3fooPf");
  EXPECT_EQ(newer[0].source, "../kernels/elementwise/v01_naive.cu");
}

// ---- the commands' bad-input paths, through the real CLI ----

namespace {

struct CliOut {
  int code;
  std::string err;
};

CliOut klab_cli(const std::string& args) {
  const std::string cmd = std::string(KLAB_BINARY) + " " + args + " 2>&1 >/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  std::string err;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) err += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, err};
}

}  // namespace

class OccupancyCli : public ::testing::TestWithParam<std::pair<const char*, const char*>> {};

// Wrong requests fail the same way with or without a GPU: one line, exit 2, before GPU work.
TEST_P(OccupancyCli, OneLineAndExitTwo) {
  const auto [args, expect] = GetParam();
  const CliOut o = klab_cli(args);
  EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << "\n" << o.err;
  EXPECT_NE(o.err.find(expect), std::string::npos) << args << "\n" << o.err;
}

const std::pair<const char*, const char*> kOccupancyCliCases[] = {
    {"occupancy vector_add", "not a variant id"},
    {"occupancy vector_add.v99_nope", "unknown variant"},
    {"occupancy vector_add.v00_cpu", "CPU variant"},
#if KLAB_HAS_CUDA  // GPU rungs are registered only in the CUDA build
    {"occupancy vector_add.v01_naive --dtype f33", "unknown dtype"},
    {"occupancy vector_add.v01_naive --shape n=0", "must be positive"},
    {"profile vector_add.v01_naive --set nope", "--set"},
#endif
    {"occupancy", "variant is required"},
    {"sass", "needs a variant id"},
    {"profile vector_add.v00_cpu", "CPU variant"},
};
INSTANTIATE_TEST_SUITE_P(Inspect, OccupancyCli, ::testing::ValuesIn(kOccupancyCliCases));

// Without a GPU (or without ncu / cuobjdump) the commands say so in one line and exit 2.
TEST(OccupancyCli, NoGpuOrToolIsOneLine) {
  for (const char* args : {"occupancy vector_add.v01_naive", "profile vector_add.v01_naive",
                           "sass vector_add.v01_naive", "sass --kernel no_such_kernel_anywhere",
                           "sass --kernel naive_gray --json /tmp/klab_sass_no_variant.json"}) {
    const CliOut o = klab_cli(args);
    if (o.code == 0) continue;  // a GPU and the tools are here: nothing to check
    EXPECT_EQ(o.code, 2) << args << "\n" << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << args << "\n" << o.err;
  }
}

TEST(Sass, PtxEntry) {
  const char* ptx =
      ".version 9.0\n.target sm_90a\n.address_size 64\n\n"
      ".visible .entry _Z3fooPf(\n.param .u64 _Z3fooPf_param_0\n)\n{\nret;\n}\n"
      ".entry _Z3barPfi(\n.param .u64 p\n)\n{\n.reg .b32 %r<2>;\n{\nret;\n}\n}\n";
  const std::string bar = klab::extract_ptx_entry(ptx, "_Z3barPfi");
  EXPECT_NE(bar.find(".target sm_90a"), std::string::npos);
  EXPECT_NE(bar.find(".entry _Z3barPfi("), std::string::npos);
  EXPECT_EQ(bar.find("_Z3fooPf"), std::string::npos);
  EXPECT_EQ(bar.substr(bar.size() - 9),
            "ret;\n}\n}\n");  // through the body's brace, not the inner one
  EXPECT_NE(klab::extract_ptx_entry(ptx, "_Z3fooPf").find("ret;"), std::string::npos);
  EXPECT_EQ(klab::extract_ptx_entry(ptx, "_Z3foo"), "");  // a prefix is not a match
}

// Why this build cannot disassemble its own kernels here ("" when it can).
static std::string why_no_disassembly() {
  if (!KLAB_HAS_CUDA) return "cpu-only build: no kernels to disassemble";
  if (std::system(
          "command -v cuobjdump >/dev/null 2>&1 || test -x /usr/local/cuda/bin/cuobjdump") != 0)
    return "no cuobjdump here";
  return "";
}

// `klab sass --kernel NAME` needs no GPU: it disassembles this build's own kernels wherever
// cuobjdump is installed (scripts/setup.sh installs it from PyPI where the toolkit lacks it).
TEST(SassCli, DisassemblesABuiltKernelWithoutAGpu) {
  if (const std::string why = why_no_disassembly(); !why.empty()) GTEST_SKIP() << why;
  const std::string cmd = std::string(KLAB_BINARY) + " sass --kernel naive_gray 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  ASSERT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find("naive_gray"), std::string::npos) << out;
  EXPECT_NE(out.find("global load"), std::string::npos) << out;  // the grayscale kernel loads
  EXPECT_NE(out.find("global store"), std::string::npos) << out;
  EXPECT_EQ(out.find(" 0 instructions"), std::string::npos) << out;  // the SASS was read
}

// `klab sass --binary FILE --kernel NAME` reads another file's kernels (a library such as
// cuBLAS's); bad uses get one line and exit 2 before any work.
TEST(SassCli, ReadsAnotherBinary) {
  auto run = [](const std::string& args, std::string& out) {
    const std::string cmd = std::string(KLAB_BINARY) + " sass " + args + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    char buf[512];
    out.clear();
    while (fgets(buf, sizeof buf, p)) out += buf;
    const int status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  std::string out;
  EXPECT_EQ(run("--binary /nonexistent/libfoo.so --kernel x", out), 2) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
  EXPECT_NE(out.find("no such file"), std::string::npos) << out;
  EXPECT_EQ(run(std::string("--binary ") + KLAB_BINARY, out), 2) << out;  // no --kernel / --list
  EXPECT_NE(out.find("needs --kernel"), std::string::npos) << out;
  EXPECT_EQ(run("--arch sm_90 --kernel x", out), 2) << out;  // --arch without --binary
  if (const std::string why = why_no_disassembly(); !why.empty()) GTEST_SKIP() << why;
  // klab's own binary named explicitly reads the same kernel as without --binary.
  ASSERT_EQ(run(std::string("--binary ") + KLAB_BINARY + " --kernel naive_gray", out), 0) << out;
  EXPECT_NE(out.find("naive_gray"), std::string::npos) << out;
  EXPECT_NE(out.find("global store"), std::string::npos) << out;
}

TEST(Demangle, DropsNsightsAnonymousNamespaceMarkers) {
  // Nsight Compute's function-base names, as its CSV gives them for kernels in an anonymous
  // namespace: the marker whole, and cut short with the scope before it.
  EXPECT_EQ(klab::demangle("void <unnamed>::k<<unnamed>::Cfg, __nv_bfloat16>(int)"),
            "void k<Cfg, __nv_bfloat16>(int)");
  EXPECT_EQ(klab::demangle("void unnamed>::wgmma_tma_kernel<unnamed>::V10Config, "
                           "__nv_bfloat16>(CUtensorMap_st, int)"),
            "void wgmma_tma_kernel<V10Config, __nv_bfloat16>(CUtensorMap_st, int)");
  EXPECT_EQ(klab::demangle("void copy_kernel(float4 const*)"), "void copy_kernel(float4 const*)");
  EXPECT_EQ(klab::demangle("_Z3fooPf"), "foo(float*)");
}

TEST(KernelCapture, FunctionNameDropsTemplateArgumentsAndParameters) {
  EXPECT_EQ(klab::kernel_function_name(
                "void klab::sgemm::(anonymous namespace)::multistage_kernel<klab::sgemm::Cfg<128, "
                "64>, true>(float const*, float const*, float*, int, int, int)"),
            "klab::sgemm::(anonymous namespace)::multistage_kernel");
  EXPECT_EQ(klab::kernel_function_name("copy_kernel(float4 const*, float4*, long)"), "copy_kernel");
  EXPECT_EQ(
      klab::kernel_function_name("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64"),
      "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64");
}
