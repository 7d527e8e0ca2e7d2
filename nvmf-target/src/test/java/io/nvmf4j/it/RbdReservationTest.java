package io.nvmf4j.it;

import io.nvmf4j.testhost.FreePorts;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.engine.ReservationInfo;
import io.nvmf4j.javaengine.JavaEngine;
import io.nvmf4j.testhost.CephCluster;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;

import static io.nvmf4j.it.Le.slice;
import static io.nvmf4j.it.Le.u16;
import static io.nvmf4j.it.Le.u32;
import static io.nvmf4j.it.Le.u64;
import static io.nvmf4j.it.Le.u8;
import static io.nvmf4j.it.ReservationTest.block;
import static io.nvmf4j.it.ReservationTest.conflict;
import static io.nvmf4j.it.ReservationTest.ok;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Persistent reservations of an rbd namespace shared by two gateways: two targets in this JVM serve one RBD image
 * of a real Ceph cluster ({@link CephCluster}) as the same namespace (same NGUID), each on its own port, and the
 * test initiator is two hosts, A through gateway 1 and B through gateway 2. The reservation lives in the image's
 * metadata ({@code nvmf4j.reservation}): what one gateway changes the other enforces when the command completes,
 * concurrent changes through both are all kept, and it survives the restart of either gateway.
 */
@ExtendWith(CephCluster.class)
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RbdReservationTest extends RbdGateways {
    private final TargetConfig[] config = new TargetConfig[2];

    RbdReservationTest() {
        super("resv");
    }

    private void start(int i) throws IOException {
        if (config[i] == null) {
            config[i] = gatewayConfig(new ListenerConfig("tcp", TestTarget.ADDRESS, FreePorts.pick()), false);
        }
        gw[i] = JavaEngine.start(config[i], IoObserver.NONE, null);
    }

    private void restart(int i) throws IOException {
        gw[i].close();
        gw[i] = null;
        start(i);
    }

    private NvmeController connect(int i, String hostnqn) throws IOException {
        return connectPort(config[i].subsystems.get(0).listeners.get(0).port, hostnqn);
    }

    /** What the image's metadata holds, read by Ceph's own rbd tool (without its journal of notices). */
    private ReservationInfo kept() throws Exception {
        com.fasterxml.jackson.databind.node.ObjectNode value = keptValue();
        value.remove("notices");
        return io.nvmf4j.config.ConfigStore.mapper().treeToValue(value, ReservationInfo.class);
    }

    private com.fasterxml.jackson.databind.node.ObjectNode keptValue() throws Exception {
        String json = CephCluster.get().rbd("image-meta", "get", CephCluster.get().pool() + "/" + image,
            "nvmf4j.reservation");
        return (com.fasterxml.jackson.databind.node.ObjectNode) io.nvmf4j.config.ConfigStore.mapper()
            .readTree(json.trim());
    }

    /** Takes the oldest page of {@code c}'s log page 80h: {type, nsid, pages still available after it}. */
    private static int[] takeNotice(NvmeController c) {
        byte[] page = c.admin().getLogPage(0x80, -1, 0, 64).data();
        return new int[] {u8(page, 8), (int) u32(page, 12), u8(page, 9)};
    }

    @Test
    void aChangeThroughOneGatewayNotifiesTheHostsConnectedThroughTheOther() throws Exception {
        start(0);
        start(1);
        NvmeController a = connect(0, HOST_A);
        NvmeController b = connect(1, HOST_B);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));
        ok(a.io(0).resvAcquire(1, 0, WRITE_EXCLUSIVE, KEY_A, 0));

        // Registration Preempted: A preempts B through gateway 1; B, connected through gateway 2 only, hears it
        CompletableFuture<Completion> aer = b.admin().asyncEventRequest();
        ok(a.io(0).resvAcquire(1, 1, WRITE_EXCLUSIVE, KEY_A, KEY_B));
        assertThat(aer.get(10, TimeUnit.SECONDS).dw0()).as("AEN on gateway 2: reservation log page available")
            .isEqualTo(ReservationTest.AEN_RESERVATION);
        assertThat(takeNotice(b)).as("registration preempted, nsid 1, no more pages")
            .containsExactly(ReservationTest.NOTICE_REG_PREEMPTED, 1, 0);
        assertThat(takeNotice(b)[0]).as("read once").isZero();
        assertThat(takeNotice(a)[0]).as("A, the preempting host, hears nothing").isZero();
        conflict(b.io(0).write(1, 10, block(1)));

        // Reservation Released: B registers again; A's Write Exclusive - Registrants Only ends through gateway 1
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));
        ok(a.io(0).resvRelease(1, 0, WRITE_EXCLUSIVE, KEY_A));
        ok(a.io(0).resvAcquire(1, 0, 3, KEY_A, 0));
        ok(a.io(0).resvRelease(1, 0, 3, KEY_A));
        assertThat(takeNotice(b)).as("reservation released (none for the plain Write Exclusive release)")
            .containsExactly(ReservationTest.NOTICE_RELEASED, 1, 0);

        // the mask B's controller set on gateway 2 holds for changes through gateway 1 too
        ok(b.admin().execute(io.nvmf4j.testhost.Sqe.of(io.nvmf4j.testhost.NvmeHost.OPC_SET_FEATURES).nsid(1)
            .cdw(10, ReservationTest.FID_NOTIFICATION_MASK).cdw(11, 1 << ReservationTest.NOTICE_RELEASED)));
        ok(a.io(0).resvAcquire(1, 0, 3, KEY_A, 0));
        ok(a.io(0).resvRelease(1, 0, 3, KEY_A));
        assertThat(takeNotice(b)[0]).as("reservation released, masked on B's controller").isZero();

        // Reservation Preempted: A clears through gateway 1
        ok(a.io(0).resvAcquire(1, 0, 2, KEY_A, 0));
        ok(a.io(0).resvRelease(1, 1, 0, KEY_A));
        assertThat(takeNotice(b)).as("reservation preempted by the clear").containsExactly(
            ReservationTest.NOTICE_PREEMPTED, 1, 0);
        assertThat(keptValue().path("notices").path("last").asLong())
            .as("notices kept with the image: preempted, released, released (masked on B's controller only), clear")
            .isEqualTo(4);
    }

    @Test
    void aHostConnectedThroughBothGatewaysHearsEachNoticeOncePerController() throws Exception {
        start(0);
        start(1);
        NvmeController a0 = connect(0, HOST_A);
        NvmeController a1 = connect(1, HOST_A);
        NvmeController b = connect(1, HOST_B);
        ok(a0.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));
        ok(a1.io(0).resvAcquire(1, 0, 2, KEY_A, 0)); // A holds Exclusive Access, taken through gateway 2
        CompletableFuture<Completion> aer0 = a0.admin().asyncEventRequest();
        CompletableFuture<Completion> aer1 = a1.admin().asyncEventRequest();

        // B preempts A through gateway 2: gateway 2 tells its controller of A, gateway 1 its own; one page each
        ok(b.io(0).resvAcquire(1, 1, WRITE_EXCLUSIVE, KEY_B, KEY_A));
        assertThat(aer0.get(10, TimeUnit.SECONDS).dw0()).isEqualTo(ReservationTest.AEN_RESERVATION);
        assertThat(aer1.get(10, TimeUnit.SECONDS).dw0()).isEqualTo(ReservationTest.AEN_RESERVATION);
        for (NvmeController c : List.of(a0, a1)) {
            byte[] page = c.admin().getLogPage(0x80, -1, 0, 64).data();
            assertThat(u64(page, 0)).as("log page count: the first page of this controller").isEqualTo(1);
            assertThat(u8(page, 8)).isEqualTo(ReservationTest.NOTICE_REG_PREEMPTED);
            assertThat(u8(page, 9)).as("no second copy waits").isZero();
            assertThat(takeNotice(c)[0]).isZero();
        }
        // gateway 2 re-reads the state at its next command, and gateway 1 at the next announcement: still one each
        ok(b.io(0).resvRelease(1, 0, WRITE_EXCLUSIVE, KEY_B));
        ok(a0.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        assertThat(takeNotice(a0)[0]).isZero();
        assertThat(takeNotice(a1)[0]).isZero();
    }

    @Test
    void aReservationTakenThroughOneGatewayHoldsThroughTheOtherAndAcrossRestarts() throws Exception {
        start(0);
        start(1);
        NvmeController a = connect(0, HOST_A);
        NvmeController b = connect(1, HOST_B);
        ok(b.io(0).write(1, 10, block(1))); // no reservation yet: B writes through gateway 2

        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(a.io(0).resvAcquire(1, 0, WRITE_EXCLUSIVE, KEY_A, 0));
        // gateway 2 enforces it as soon as A's acquire has completed on gateway 1
        conflict(b.io(0).write(1, 10, block(2)));
        ok(b.io(0).read(1, 10, 1)); // Write Exclusive lets everyone read
        ok(a.io(0).write(1, 11, block(3)));
        ok(b.io(0).resvRegister(1, 0, false, 0, 0, KEY_B));
        conflict(b.io(0).write(1, 10, block(2))); // registered, but not the holder of a Write Exclusive

        byte[] r = b.io(0).resvReport(1, true, 4096).data();
        assertThat(u32(r, 0)).as("generation: two registrations, through two gateways").isEqualTo(2);
        assertThat(u8(r, 4)).as("Write Exclusive").isEqualTo(WRITE_EXCLUSIVE);
        assertThat(u16(r, 5)).as("REGCTL").isEqualTo(2);
        assertThat(slice(r, 64 + 16, 16)).as("A, registered through gateway 1").isEqualTo(a.hostid());
        assertThat(u8(r, 64 + 2) & 1).as("A holds it").isEqualTo(1);
        assertThat(u64(r, 64 + 8)).isEqualTo(KEY_A);
        assertThat(slice(r, 128 + 16, 16)).isEqualTo(b.hostid());
        assertThat(u8(r, 128 + 2) & 1).as("B does not").isEqualTo(0);

        ReservationInfo info = kept();
        assertThat(info.holder()).as("the image's metadata, read by rbd").isEqualTo(HexFormat.of().formatHex(a.hostid()));
        assertThat(info.registrants()).hasSize(2);
        assertThat(gw[1].reservation(TestTarget.SUBNQN, 1)).isEqualTo(info);

        // gateway 2 restarts (no state directory: the state is the image's): B is still fenced, A still holds it
        disconnect(b);
        restart(1);
        b = connect(1, HOST_B);
        conflict(b.io(0).write(1, 10, block(2)));
        assertThat(slice(b.io(0).resvReport(1, true, 4096).data(), 64 + 16, 16)).isEqualTo(a.hostid());
        // and gateway 1 too
        disconnect(a);
        restart(0);
        a = connect(0, HOST_A);
        ok(a.io(0).write(1, 12, block(4)));
        conflict(b.io(0).write(1, 10, block(2)));

        // B preempts A through gateway 2: A is fenced on gateway 1 as soon as the preempt has completed
        ok(b.io(0).resvAcquire(1, 1, WRITE_EXCLUSIVE, KEY_B, KEY_A));
        conflict(a.io(0).write(1, 12, block(5)));
        ok(b.io(0).write(1, 10, block(6)));
        assertThat(gw[0].reservation(TestTarget.SUBNQN, 1).holder()).isEqualTo(HexFormat.of().formatHex(b.hostid()));
        assertThat(gw[0].reservation(TestTarget.SUBNQN, 1).registrants()).hasSize(1);

        // B releases it through gateway 2: A may write through gateway 1 again (it is no registrant, no reservation)
        ok(b.io(0).resvRelease(1, 0, WRITE_EXCLUSIVE, KEY_B));
        ok(a.io(0).write(1, 12, block(7)));
        assertThat(kept().rtype()).isZero();
    }

    /**
     * Persist Through Power Loss on an image: one gateway's restart while the other serves keeps everything; a restart
     * of every gateway is the namespace's power loss, which clears registrations and reservation when PTPL is off
     * (the image's metadata too) and keeps them when it is on.
     */
    @Test
    void withoutPtplARestartOfEveryGatewayClearsTheRegistrations() throws Exception {
        start(0);
        start(1);
        NvmeController a = connect(0, HOST_A);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(a.io(0).resvAcquire(1, 0, WRITE_EXCLUSIVE, KEY_A, 0));
        disconnect(a);
        restart(1);
        assertThat(gw[1].reservation(TestTarget.SUBNQN, 1).registrants()).as("gateway 1 served meanwhile").hasSize(1);
        stopAll();
        start(0);
        assertThat(gw[0].reservation(TestTarget.SUBNQN, 1).registrants()).as("every gateway restarted, PTPL off")
            .isEmpty();
        assertThat(gw[0].reservation(TestTarget.SUBNQN, 1).rtype()).isZero();
        assertThat(kept().registrants()).as("the image's metadata").isEmpty();

        a = connect(0, HOST_A);
        ok(a.io(0).resvRegister(1, 0, false, 3, 0, KEY_A)); // CPTPL 11b: PTPL on
        ok(a.io(0).resvAcquire(1, 0, WRITE_EXCLUSIVE, KEY_A, 0));
        disconnect(a);
        stopAll();
        start(1);
        start(0);
        assertThat(gw[0].reservation(TestTarget.SUBNQN, 1).registrants()).as("PTPL on: kept").hasSize(1);
        assertThat(gw[1].reservation(TestTarget.SUBNQN, 1).ptpl()).isTrue();
        NvmeController b = connect(1, HOST_B);
        conflict(b.io(0).write(1, 10, block(8)));
    }

    /**
     * A namespace on an error bdev over the image (fault injection in front of rbd) shares the image's reservation as
     * the rbd bdev itself does: a reservation taken through one gateway fences through the other.
     */
    @Test
    void anErrorBdevOverTheImageSharesItsReservation() throws Exception {
        for (int i = 0; i < 2; i++) {
            config[i] = gatewayConfig(new ListenerConfig("tcp", TestTarget.ADDRESS, FreePorts.pick()), false);
            BdevConfig e = new BdevConfig("e0", "error", TestTarget.BLOCK_SIZE, 0);
            e.base = "r0";
            config[i].bdevs.add(e);
            config[i].subsystems.get(0).namespaces.get(0).bdev = "e0";
            start(i);
        }
        NvmeController a = connect(0, HOST_A);
        NvmeController b = connect(1, HOST_B);
        ok(a.io(0).resvRegister(1, 0, false, 0, 0, KEY_A));
        ok(a.io(0).resvAcquire(1, 0, WRITE_EXCLUSIVE, KEY_A, 0));
        conflict(b.io(0).write(1, 10, block(9)));
        assertThat(kept().holder()).as("kept in the image").isEqualTo(HexFormat.of().formatHex(a.hostid()));
    }

    private void stopAll() {
        for (int i = 0; i < gw.length; i++) {
            if (gw[i] != null) {
                gw[i].close();
                gw[i] = null;
            }
        }
    }

    @Test
    void concurrentRegistrationsThroughBothGatewaysAreAllKept() throws Exception {
        start(0);
        start(1);
        int hosts = 8;
        List<NvmeController> ctrls = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            ctrls.add(connect(h % 2, "nqn.2014-08.org.nvmexpress:uuid:7d0c1e2a-0000-4000-8000-0000000001" + h + "0"));
        }
        CyclicBarrier go = new CyclicBarrier(hosts);
        List<CompletableFuture<Completion>> done = new ArrayList<>();
        for (int h = 0; h < hosts; h++) {
            NvmeController c = ctrls.get(h);
            long key = 0x1000 + h;
            done.add(CompletableFuture.supplyAsync(() -> {
                try {
                    go.await(30, TimeUnit.SECONDS);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
                return c.io(0).resvRegister(1, 0, false, 0, 0, key);
            }));
        }
        for (CompletableFuture<Completion> f : done) {
            ok(f.get(60, TimeUnit.SECONDS));
        }
        for (ConfigController<JavaEngine> t : gw) {
            ReservationInfo info = t.reservation(TestTarget.SUBNQN, 1);
            assertThat(info.generation()).as("every registration counted once").isEqualTo(hosts);
            Set<String> keys = new HashSet<>();
            info.registrants().forEach(reg -> keys.add(reg.key()));
            assertThat(keys).hasSize(hosts);
        }
        assertThat(kept().registrants()).hasSize(hosts);
    }

    @Test
    void anUnreadableReservationInTheImageStopsTheStartWithItsName() throws Exception {
        start(0);
        gw[0].close();
        gw[0] = null;
        CephCluster.get().rbd("image-meta", "set", CephCluster.get().pool() + "/" + image, "nvmf4j.reservation",
            "{not json");
        assertThatThrownBy(() -> start(0)).isInstanceOf(ControlException.class)
            .hasMessageContaining("nvmf4j.reservation").hasMessageContaining(image);
        CephCluster.get().rbd("image-meta", "remove", CephCluster.get().pool() + "/" + image, "nvmf4j.reservation");
        start(0); // without the key: no registrants
        assertThat(gw[0].reservation(TestTarget.SUBNQN, 1).registrants()).isEmpty();
    }
}
