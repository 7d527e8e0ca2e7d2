package io.nvmf4j.it;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A long command (Dataset Management of 256 whole-device ranges on a RAM namespace: 256 memsets of the whole
 * device) runs in bounded steps: the other controllers of its poll group are served meanwhile, and removing
 * the namespace and its device while it runs stops it without freeing memory under it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LongCommandTest {
    private static final int NSID = 5;
    private static final long BLOCKS = 262144; // 128 MiB: 256 whole-device ranges are 32 GiB of memset
    private static final TcpHostOptions PATIENT = new TcpHostOptions(false, false, 8192, Duration.ofSeconds(100));

    private static TestTarget start() throws Exception {
        return TestTarget.start(c -> {
            c.cores = 1; // every queue on one poll group
            c.bdevs.add(new BdevConfig("big", "malloc", 512, BLOCKS));
            c.subsystems.get(0).namespaces.add(new NamespaceConfig(NSID, "big"));
        });
    }

    private static CompletableFuture<Completion> wholeDeviceDsm(NvmeHost io) {
        NvmeHost.Range[] ranges = new NvmeHost.Range[256];
        java.util.Arrays.fill(ranges, new NvmeHost.Range(0, (int) BLOCKS));
        return io.deallocateAsync(NSID, 4096, ranges);
    }

    /** Waits (up to 10 s) for the DSM to reach the device, then checks that it is still running there. */
    private static void assertStillRunning(TestTarget t, CompletableFuture<Completion> dsm)
            throws InterruptedException {
        Namespace ns = t.nvmf().engine().target().subsystem(TestTarget.SUBNQN).namespace(NSID);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (ns.inFlight() == 0 && !dsm.isDone() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertThat(ns.inFlight()).as("the DSM on the device within 10 s").isPositive();
        assertThat(dsm).as("precondition: the DSM runs long enough to overlap (else this test proves nothing)")
            .isNotDone();
    }

    /**
     * Up to three tries: a try whose read came back after the DSM had ended shows nothing either way (a loaded
     * machine can hold the test's thread longer than the DSM runs), so it is tried again; a poll group that ran
     * the DSM to its end before serving the read would lose every try.
     */
    @Test
    void aReadOnAnotherControllerOfThePollGroupCompletesWhileTheDsmRuns() throws Exception {
        try (TestTarget t = start(); NvmeController a = t.controller(1, PATIENT);
             NvmeController b = t.controller(1, TcpHostOptions.DEFAULT)) {
            for (int i = 0; i < 200; i++) {
                assertThat(b.io(0).read(NSID, i * 8L, 8).ok()).isTrue(); // warm-up
            }
            java.util.List<String> tries = new java.util.ArrayList<>();
            boolean overlapped = false;
            for (int attempt = 1; attempt <= 3 && !overlapped; attempt++) {
                long idle0 = System.nanoTime();
                assertThat(b.io(0).read(NSID, 0, 8).ok()).isTrue();
                long idleReadNanos = System.nanoTime() - idle0;
                long dsmStart = System.nanoTime();
                CompletableFuture<Completion> dsm = wholeDeviceDsm(a.io(0));
                assertStillRunning(t, dsm);
                long t0 = System.nanoTime();
                Completion read = b.io(0).read(NSID, 0, 8);
                long readNanos = System.nanoTime() - t0;
                overlapped = !dsm.isDone();
                assertThat(read.ok()).as("%s", read).isTrue();
                assertThat(b.admin().keepAlive().ok()).as("keep-alive of the other controller").isTrue();
                Completion d = a.io(0).await(dsm);
                long dsmNanos = System.nanoTime() - dsmStart;
                assertThat(d.ok()).as("%s", d).isTrue();
                String line = String.format("try %d: read %.3f ms (%.3f ms without the DSM), DSM %.0f ms, the read %s",
                    attempt, readNanos / 1e6, idleReadNanos / 1e6, dsmNanos / 1e6,
                    overlapped ? "completed while the DSM ran" : "came back after the DSM had ended");
                tries.add(line);
                System.out.println("LongCommandTest: 4 KiB read on another controller of the poll group during a "
                    + "256-range whole-device DSM (128 MiB RAM namespace), " + line);
            }
            assertThat(overlapped).as("a read completed while the DSM was still running, in one of: %s", tries).isTrue();
        }
    }

    @Test
    void removingTheNamespaceAndItsDeviceDuringTheDsmStopsItWithoutFreeingUnderIt() throws Exception {
        try (TestTarget t = start(); NvmeController a = t.controller(1, PATIENT);
             NvmeController b = t.controller(1, TcpHostOptions.DEFAULT)) {
            byte[] data = Le.random(4096, 21);
            assertThat(b.io(0).write(1, 0, data).ok()).isTrue();
            CompletableFuture<Completion> dsm = wholeDeviceDsm(a.io(0));
            assertStillRunning(t, dsm);
            t.nvmf().removeNamespace(TestTarget.SUBNQN, NSID);
            t.nvmf().removeBdev("big"); // waits for the DSM to stop; frees the memory only then
            Completion d = a.io(0).await(dsm);
            assertStatus(d, 0, 0x0B, true); // aborted at its next step: Invalid Namespace
            assertThat(b.io(0).read(1, 0, 8).data()).as("the target carries on").isEqualTo(data);
            assertStatus(a.io(0).read(NSID, 0, 1), 0, 0x0B, true);
        }
    }
}
