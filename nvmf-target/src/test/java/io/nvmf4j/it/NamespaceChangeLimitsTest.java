package io.nvmf4j.it;

import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Changed Namespace List (log page 04h) and its event at scale, with two hosts connected while namespaces
 * come and go in a subsystem larger than the list:
 * <ul>
 *   <li>the list holds up to 1,024 NSIDs; a change to an NSID already listed does not overflow a full list; the
 *       1,025th changed namespace turns it into one 0xFFFFFFFF entry and zeros (NVMe Base 2.0, 5.16.1.5);</li>
 *   <li>every read of the page empties it (with Retain Asynchronous Event too, as nvmet and SPDK do); a read
 *       without RAE also unmasks the event;</li>
 *   <li>however many namespaces change, each host gets one Namespace Attribute Changed event until it reads the
 *       page (the event is masked until then), and the control calls do not wait for the hosts.</li>
 * </ul>
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class NamespaceChangeLimitsTest {
    private static final int AEC_NS_ATTRIBUTE = 1 << 8;
    private static final int LID_CHANGED_NS = 0x04;
    private static final int RAE = 1 << 15;
    private static final int ADDED = 1100;
    private static final int LIST_MAX = 1024;

    @Test
    void moreThan1024ChangedNamespacesOverflowTheListAndEachHostGetsOneEvent() throws Exception {
        try (TestTarget t = TestTarget.start(c -> c.subsystems.get(0).maxNamespaces = 2048);
             NvmeController a = t.controller(1, TcpHostOptions.DEFAULT);
             NvmeController b = TestTarget.openController(t.port, TestTarget.ALLOWED_HOSTNQN)) {
            List<NvmeHost> hosts = List.of(a.admin(), b.admin());
            List<CompletableFuture<Completion>> first = new ArrayList<>();
            List<CompletableFuture<Completion>> second = new ArrayList<>();
            for (NvmeHost h : hosts) {
                assertThat(h.setFeatures(0x0B, AEC_NS_ATTRIBUTE).ok()).isTrue();
                first.add(h.asyncEventRequest());
                second.add(h.asyncEventRequest());
            }

            List<Integer> added = new ArrayList<>();
            for (int i = 0; i < LIST_MAX; i++) {
                added.add(addNullNamespace(t, i, hosts));
            }
            // a full list, and a change to an NSID it holds: still the 1,024 NSIDs, ascending. Host a reads it with
            // RAE: the read empties its list (as every read does) and leaves the event masked
            t.nvmf().removeNamespace(TestTarget.SUBNQN, added.get(0));
            TestTarget.settleAdmin(a.admin());
            byte[] full = changedNamespaces(a.admin(), RAE);
            for (int i = 0; i < LIST_MAX; i++) {
                assertThat(Le.u32(full, 4 * i)).as("entry %d of a full list", i).isEqualTo((long) added.get(i));
            }
            assertThat(changedNamespaces(a.admin(), RAE)).as("read again: emptied by the read with RAE").containsOnly(0);
            for (int i = LIST_MAX; i < ADDED; i++) {
                added.add(addNullNamespace(t, i, hosts));
            }

            for (int k = 0; k < hosts.size(); k++) {
                NvmeHost h = hosts.get(k);
                Completion event = first.get(k).get(10, TimeUnit.SECONDS);
                assertThat(event.ok()).isTrue();
                assertThat((event.dw0() >>> 16) & 0xFF).as("log page of the event").isEqualTo(LID_CHANGED_NS);
                TestTarget.settleAdmin(h);
                assertThat(second.get(k)).as("a second event while the first is not answered by a read").isNotDone();
            }
            // host a: the 76 changed since its read; host b: more than 1,024 since the start
            byte[] since = changedNamespaces(a.admin(), 0);
            for (int i = LIST_MAX; i < ADDED; i++) {
                assertThat(Le.u32(since, 4 * (i - LIST_MAX))).as("entry %d after the read", i - LIST_MAX)
                    .isEqualTo((long) added.get(i));
            }
            assertThat(Le.u32(since, 4 * (ADDED - LIST_MAX))).isZero();
            byte[] overflow = changedNamespaces(b.admin(), 0);
            assertThat(Le.u32(overflow, 0)).as("more than 1,024 changed: first entry").isEqualTo(0xFFFFFFFFL);
            assertThat(java.util.Arrays.copyOfRange(overflow, 4, 4096)).as("the rest").containsOnly(0);
            for (int k = 0; k < hosts.size(); k++) {
                NvmeHost h = hosts.get(k);
                assertThat(changedNamespaces(h, 0)).as("read again: cleared by the read").containsOnly(0);
                TestTarget.settleAdmin(h);
                assertThat(second.get(k)).as("no change since the read").isNotDone();
            }

            t.nvmf().removeNamespace(TestTarget.SUBNQN, added.get(ADDED - 1));
            for (int k = 0; k < hosts.size(); k++) {
                Completion event = second.get(k).get(10, TimeUnit.SECONDS);
                assertThat((event.dw0() >>> 16) & 0xFF).as("the event again after the read").isEqualTo(LID_CHANGED_NS);
                byte[] one = changedNamespaces(hosts.get(k), 0);
                assertThat(Le.u32(one, 0)).isEqualTo((long) added.get(ADDED - 1));
                assertThat(Le.u32(one, 4)).isZero();
            }
            TestTarget.assertWriteReadBack(a.io(0), 0, 4096, 9);
        }
    }

    /** Adds namespace {@code i} on a null bdev; every 64th, the hosts send a Keep Alive as a host does within KATO. */
    private static int addNullNamespace(TestTarget t, int i, List<NvmeHost> hosts) {
        if (i % 64 == 0) {
            hosts.forEach(h -> assertThat(h.keepAlive().ok()).as("Keep Alive").isTrue());
        }
        t.nvmf().addBdev(new BdevConfig("many" + i, "null", 512, 2048));
        return t.nvmf().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(0, "many" + i)).nsid;
    }

    /** The whole page (4 KiB); {@code rae} RAE or 0. */
    private static byte[] changedNamespaces(NvmeHost h, int rae) {
        int numd = 4096 / 4 - 1;
        Completion log = h.executeRead(Sqe.of(NvmeHost.OPC_GET_LOG_PAGE).nsid(-1)
            .cdw(10, LID_CHANGED_NS | rae | (numd << 16)), 4096);
        assertThat(log.ok()).as("%s", log).isTrue();
        return log.data();
    }
}
