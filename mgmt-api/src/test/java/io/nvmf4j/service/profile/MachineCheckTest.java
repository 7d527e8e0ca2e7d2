package io.nvmf4j.service.profile;

import io.nvmf4j.engine.Engines;
import io.nvmf4j.kernel.Sysctl;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** check --profile over fake /proc and /sys trees, and once for real on this machine. */
class MachineCheckTest {
    private static final String[] MLX5_MODULES = {"ib_core", "ib_uverbs", "rdma_cm", "rdma_ucm", "mlx5_core", "mlx5_ib"};
    private static final String[] RXE_MODULES = {"ib_core", "ib_uverbs", "rdma_cm", "rdma_ucm", "rdma_rxe"};

    @TempDir
    Path tmp;

    static TargetRun check(String... args) {
        return TargetRun.of("check", args);
    }

    private FakeMachine bluefield3() {
        return FakeMachine.arm(tmp, 16, "0xd41", 32, 24, 2048).modules(MLX5_MODULES)
            .mlx5("mlx5_0", "4: ACTIVE").mlx5("mlx5_1", "4: ACTIVE");
    }

    @Test
    void aBlueField3AsSetUpPassesEveryCheck() {
        bluefield3();
        TargetRun r = check("--profile", "bluefield3", "--root", tmp.toString());
        assertThat(r.failed()).as(r.out()).isEmpty();
        assertThat(r.exit()).isZero();
        assertThat(r.out()).contains("ok    architecture: aarch64", "ok    rdma devices: [mlx5_0 (mlx5_core), "
            + "mlx5_1 (mlx5_core)]", "all 13 checks passed");
    }

    @Test
    void aBlueField2IsNotABlueField3() {
        FakeMachine.arm(tmp, 8, "0xd08", 16, 12, 2048).modules(MLX5_MODULES)
            .mlx5("mlx5_0", "4: ACTIVE").mlx5("mlx5_1", "4: ACTIVE");
        TargetRun r = check("--profile", "bluefield3", "--root", tmp.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.failed()).containsExactly("cpu model", "cpus", "memory");
        assertThat(r.out()).contains("FAIL  cpus: 8 online (profile: 16)", "or fit the poll groups to this machine");
        assertThat(check("--profile", "bluefield2", "--root", tmp.toString()).exit()).isZero();
    }

    @Test
    void eachMissingPieceFailsWithTheCommandThatFixesIt() {
        FakeMachine.arm(tmp, 16, "0xd41", 32, 24, 16).modules("ib_core", "mlx5_core")
            .mlx5("mlx5_0", "1: DOWN").mlx5("mlx5_1", "4: ACTIVE")
            .file("/proc/self/limits", "Max locked memory         8388608              8388608              bytes\n")
            .file("/proc/mounts", "proc /proc proc rw 0 0\n");
        TargetRun r = check("--profile", "bluefield3", "--root", tmp.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.failed()).containsExactly("hugepages", "hugetlbfs", "memlock", "kernel modules", "rdma ports");
        long needed = Sizing.asShipped(Profile.load("bluefield3"), Profile.load("bluefield3").preset()).hugepages;
        assertThat(r.out()).contains(
            "FAIL  hugepages: 16 x 2 MiB reserved (needed: " + needed + ")",
            "      fix: echo " + needed + " > /proc/sys/vm/nr_hugepages",
            "      fix: systemctl start dev-hugepages.mount",
            "FAIL  memlock: 8388608 bytes",
            "      fix: run as the unit does (LimitMEMLOCK=infinity), or by hand after: ulimit -l unlimited",
            "FAIL  kernel modules: not loaded: ib_uverbs rdma_cm rdma_ucm mlx5_ib",
            "      fix: modprobe -a ib_uverbs rdma_cm rdma_ucm mlx5_ib",
            "FAIL  rdma ports: not ACTIVE: [mlx5_0 [DOWN]]",
            "      fix: ip link set <uplink netdev> up",
            "5 of 13 checks failed");
    }

    @Test
    void softRoceCountsOnlyWithSimulate() {
        FakeMachine.arm(tmp, 16, "0xd41", 32, 24, 2048).modules(RXE_MODULES).rxe("rxe0", "eth0", "4: ACTIVE");
        TargetRun real = check("--profile", "bluefield3", "--root", tmp.toString());
        assertThat(real.exit()).isEqualTo(1);
        assertThat(real.failed()).containsExactly("kernel modules", "rdma devices", "rdma ports");
        assertThat(real.out()).contains("FAIL  rdma devices: [rxe0 (rxe)]; mlx5 wanted: 2",
            "soft-RoCE stands in only with --simulate");
        TargetRun sim = check("--profile", "bluefield3", "--simulate", "--root", tmp.toString());
        assertThat(sim.failed()).as(sim.out()).isEmpty();
        assertThat(sim.exit()).isZero();
        assertThat(sim.out()).contains("ok    rdma devices: [rxe0 (rxe)]; mlx5 or rxe (--simulate) wanted: 1");
    }

    @Test
    void aSmallTcgGuestPassesWithSimulateAndScaleDown() {
        // what the aarch64 QEMU guest has: 4 emulated cores (QEMU's 'max' reports its own part), 3 GiB, rxe
        FakeMachine.arm(tmp, 4, "0x000", 3, 2, 32).modules(RXE_MODULES).rxe("rxe0", "eth0", "4: ACTIVE");
        TargetRun full = check("--profile", "bluefield3", "--simulate", "--root", tmp.toString());
        assertThat(full.exit()).isEqualTo(1);
        assertThat(full.failed()).containsExactly("cpus", "memory", "free memory", "hugepages");
        TargetRun scaled = check("--profile", "bluefield3", "--simulate", "--scale-down", "--root", tmp.toString());
        assertThat(scaled.failed()).as(scaled.out()).isEmpty();
        assertThat(scaled.exit()).isZero();
        assertThat(scaled.out()).contains("scaled down: 2 poll group(s) on CPUs 2-3");
    }

    @Test
    void aSoftRoceDeviceWhoseNetdevIsDownFailsItsPort() {
        FakeMachine.arm(tmp, 4, "0x000", 3, 2, 64).modules(RXE_MODULES).rxe("rxe0", "eth0", "1: DOWN");
        TargetRun r = check("--profile", "bluefield2", "--simulate", "--scale-down", "--root", tmp.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.failed()).containsExactly("rdma ports");
    }

    @Test
    void theEngineLineSaysWhichEngineWillRunAndTheHugepagesFollowIt() {
        bluefield3();
        TargetRun spdk = TargetRun.of(FakeProbe.SPDK_LOADS, "check", "--profile", "bluefield3", "--root", tmp.toString());
        assertThat(spdk.exit()).as(spdk.out()).isZero();
        Profile p = Profile.load("bluefield3");
        long spdkPages = p.preset().spdk.memSizeMb / 2 + Profile.SPDK_SPARE_HUGEPAGES;
        assertThat(spdk.out()).contains("ok    hugepages: 2048 x 2 MiB reserved (needed: " + spdkPages + ")",
            "\nengine: spdk (the profile's default: libnvmf4j_spdk for aarch64 (SPDK v26.05) present and loads; "
                + "this kernel has 2 MiB hugepages, which setup reserves for SPDK's memory)\nall 13 checks passed\n");

        TargetRun java = TargetRun.of(FakeProbe.SPDK_ABSENT, "check", "--profile", "bluefield3", "--root", tmp.toString());
        assertThat(java.exit()).isZero();
        long javaPages = Sizing.asShipped(p, p.preset()).hugepages;
        assertThat(java.out()).contains("ok    hugepages: 2048 x 2 MiB reserved (needed: " + javaPages + ")",
            "engine: java (engine spdk cannot run here: libnvmf4j_spdk has no aarch64 build in this package: ",
            "; the profile runs spdk where it can)\nall 13 checks passed");
    }

    @Test
    void anEngineTheConfigurationNamesThatCannotRunHereFailsTheCheckWithItsFix() throws Exception {
        bluefield3();
        Path config = tmp.resolve(ProfileSetup.STATE_CONFIG.substring(1));
        Files.createDirectories(config.getParent());
        Files.writeString(config, "{\"engine\": \"spdk\"}");
        TargetRun r = TargetRun.of(FakeProbe.SPDK_UNLOADABLE, "check", "--profile", "bluefield3", "--root",
            tmp.toString());
        assertThat(r.exit()).isEqualTo(1);
        assertThat(r.failed()).isEmpty();
        assertThat(r.out()).contains("engine: spdk (named in /var/lib/nvmf4j/config.json, which wins over the "
                + "profile's default (here: java); but engine spdk cannot run here: native library nvmf4j_spdk",
            "      fix: name an engine that runs here in /var/lib/nvmf4j/config.json: \"engine\": \"java\"",
            "all 13 checks passed; the configured engine cannot run here");
    }

    /**
     * The engine line on this machine: the spdk engine's own check in this process decides (this build's library for
     * this architecture, loaded), as the service's start would.
     */
    @Test
    void onThisMachineTheEngineLineIsTheSpdkEnginesOwnCheck() {
        Assumptions.assumeFalse(Files.exists(Path.of(ProfileSetup.STATE_CONFIG)),
            "this machine has a configuration of its own, whose engine wins");
        TargetRun r = check("--profile", "bluefield3");
        String cause = Engines.unavailabilityCause(Engines.SPDK);
        boolean twoMiB = Files.isDirectory(Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB"));
        if (cause == null && twoMiB) {
            assertThat(r.out()).contains("engine: spdk (the profile's default: " + Engines.runsOn(Engines.SPDK)
                + " present and loads; this kernel has 2 MiB hugepages");
        } else {
            assertThat(r.out()).contains("engine: java (" + (cause != null ? cause : "engine spdk cannot run here: "
                + "this kernel has no 2 MiB hugepages"));
        }
    }

    @Test
    void anUnknownProfileIsBadUsage() {
        TargetRun r = check("--profile", "connectx7");
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.err()).contains("no profile 'connectx7' (profiles: bluefield2, bluefield3)");
    }

    /**
     * The real machine this runs on, through the real /proc and /sys: an x86-64 build machine is no BlueField, so
     * the check must fail there, each failure with its fix. What else fails follows from what the machine has,
     * read here independently of MachineFacts.
     */
    @Test
    void onThisMachineItFailsWithTheFixesAndExitsNonZero() throws Exception {
        TargetRun r = check("--profile", "bluefield3");
        String arch = System.getProperty("os.arch");
        boolean arm = arch.equals("aarch64");
        assertThat(r.out()).contains("profile bluefield3 (NVIDIA BlueField-3 DPU)");
        assertThat(r.out()).containsPattern("(?m)^(ok|FAIL) +architecture: " + (arm ? "aarch64" : "x86_64"));
        int online = Runtime.getRuntime().availableProcessors();
        if (!arm) {
            assertThat(r.failed()).contains("architecture", "cpu model");
        }
        if (online < 16) {
            assertThat(r.failed()).contains("cpus");
        }
        boolean infiniband = Files.isDirectory(Path.of("/sys/class/infiniband"));
        if (!infiniband) {
            assertThat(r.failed()).contains("rdma devices", "rdma ports");
        }
        long nr = Sysctl.readLong(Path.of("/proc/sys/vm/nr_hugepages"));
        if (nr == 0) {
            assertThat(r.failed()).contains("hugepages");
        }
        assertThat(r.failed()).isNotEmpty();
        assertThat(r.exit()).isEqualTo(1);
        // every failure is followed by its fix
        String[] lines = r.out().split("\n");
        for (int i = 0; i < lines.length; i++) {
            if (lines[i].startsWith("FAIL")) {
                assertThat(lines[i + 1]).as("fix after %s", lines[i]).startsWith("      fix: ").hasSizeGreaterThan(16);
            }
        }
        assertThat(r.out()).contains(r.failed().size() + " of 13 checks failed");
        System.out.println("check --profile bluefield3 on this machine (exit " + r.exit() + "):\n" + r.out());
    }
}
