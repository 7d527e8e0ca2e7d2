package io.nvmf4j.cli;

import io.nvmf4j.cli.Cli.Run;
import io.nvmf4j.service.api.TestService;
import io.nvmf4j.testhost.CephCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code nvmfctl bdev create rbd ... --exclusive-lock} on a real Ceph cluster ({@link CephCluster}): the bdev keeps
 * the field, and the image's lock follows the ANA state of the listener as nvmfctl sets it (Ceph's own
 * {@code rbd lock ls} says who holds it).
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NvmfctlRbdTest {
    @TempDir
    Path dir;

    private static Run ok(Cli cli, String... args) {
        Run r = cli.run(args);
        assertThat(r.code()).as("%s", r).isZero();
        assertThat(r.err()).as("%s", r).isEmpty();
        return r;
    }

    /** nvmfctl against the test service's API, with its state directory (the token). */
    private static Cli cli(TestService t) {
        return new Cli(Map.of(), "--url", "http://127.0.0.1:" + t.service.apiPort(), "--state-dir", t.dir.toString());
    }

    private static String lockers(String image) throws Exception {
        return CephCluster.get().rbd("lock", "ls", CephCluster.get().pool() + "/" + image);
    }

    @Test
    void exclusiveLockFlagMakesTheLockFollowTheAnaState() throws Exception {
        CephCluster ceph = CephCluster.get();
        String image = "ctl-lock-" + ProcessHandle.current().pid();
        try (TestService t = TestService.start(dir, TestService::allowTestCeph)) {
            Cli cli = cli(t);
            ok(cli, "bdev", "create", "rbd", "r1", "--pool", ceph.pool(), "--image", image, "--ceph-conf", ceph.conf(),
                "--client", ceph.client(), "--keyring", ceph.keyring(), "--create", "--size", "8M", "--exclusive-lock");
            assertThat(ok(cli, "--json", "bdev", "get", "r1").out()).contains("\"exclusiveLock\" : true");
            ok(cli, "ns", "add", "--nqn", TestService.NQN, "--bdev", "r1"); // ANA group 1
            String[] listener = {"listener", "ana-state", "-n", TestService.NQN, "-a", "127.0.0.1", "-s",
                Integer.toString(t.nvmePort), "--group", "1", "--state"};

            ok(cli, concat(listener, "non-optimized"));
            assertThat(lockers(image)).as("non-optimized: no lock held").doesNotContain("client.");
            ok(cli, concat(listener, "optimized"));
            assertThat(lockers(image)).as("optimized: this gateway's client holds it").contains("client.")
                .contains("auto ");
            ok(cli, concat(listener, "non-optimized"));
            assertThat(lockers(image)).as("given up again").doesNotContain("client.");
        }
    }

    @Test
    void osdOpTimeoutAndCacheReachTheBdevAndTheServiceRefusesACacheUnderTheLock() throws Exception {
        CephCluster ceph = CephCluster.get();
        String image = "ctl-opts-" + ProcessHandle.current().pid();
        try (TestService t = TestService.start(dir, TestService::allowTestCeph)) {
            Cli cli = cli(t);
            String[] base = {"bdev", "create", "rbd", "r1", "--pool", ceph.pool(), "--image", image, "--ceph-conf",
                ceph.conf(), "--client", ceph.client(), "--keyring", ceph.keyring(), "--create", "--size", "8M"};

            Run refused = cli.run(concat(concat(base, "--exclusive-lock"), "--cache"));
            assertThat(refused.code()).as("%s", refused).isNotZero();
            assertThat(refused.err()).as("%s", refused).contains("cache: librbd's cache is for an image one gateway serves");
            Run outOfRange = cli.run(concat(concat(base, "--osd-op-timeout"), "61"));
            assertThat(outOfRange.code()).as("%s", outOfRange).isNotZero();
            assertThat(outOfRange.err()).as("%s", outOfRange).contains("osdOpTimeoutSeconds: must be 1..60, got 61");

            ok(cli, concat(concat(concat(base, "--osd-op-timeout"), "30"), "--cache"));
            String got = ok(cli, "--json", "bdev", "get", "r1").out();
            assertThat(got).contains("\"osdOpTimeoutSeconds\" : 30").contains("\"cache\" : true");
        }
        Run local = new Cli(Map.of(), "--url", "http://127.0.0.1:1").run("bdev", "create", "malloc", "m1", "--size",
            "8M", "--osd-op-timeout", "30");
        assertThat(local.code()).as("%s", local).isEqualTo(2);
        assertThat(local.err()).as("%s", local).contains("are for rbd bdevs only");
    }

    private static String[] concat(String[] a, String last) {
        String[] all = java.util.Arrays.copyOf(a, a.length + 1);
        all[a.length] = last;
        return all;
    }
}
