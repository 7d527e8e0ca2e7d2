package io.nvmf4j.it;

import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.Sqe;
import io.nvmf4j.testhost.TcpHostOptions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static io.nvmf4j.it.Le.u16;
import static io.nvmf4j.it.Le.u8;
import static io.nvmf4j.it.ReservationTest.KEY_A;
import static io.nvmf4j.it.ReservationTest.block;
import static io.nvmf4j.it.TestTarget.assertStatus;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reservations are advertised only where they hold on every path (NamespaceConfig#reservations), over loopback
 * NVMe/TCP. A subsystem with a narrowed cntlid range is one of several instances exporting it, and a namespace
 * there without a state they share (not rbd) has none by default: RESCAP 0 (CNS 00h and 08h), ONCS bit 5 clear,
 * the reservation commands Invalid Opcode; I/O goes on. Given {@code local}, or in a subsystem of the whole range,
 * they are this instance's own and advertised.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ReservationSharingTest {
    private static final int ONCS_RESERVATIONS = 0x20;
    private static final int SC_INVALID_OPCODE = 0x01;
    private static final int SC_INVALID_FIELD = 0x02;
    private static final int FID_RESERVATION_PERSISTENCE = 0x83;

    private TestTarget target;
    private NvmeController ctrl;

    @AfterEach
    void stop() {
        if (ctrl != null) {
            ctrl.close();
        }
        if (target != null) {
            target.close();
        }
    }

    /** The standard target whose open subsystem is one of two instances (cntlids 100..199), adjusted by {@code more}. */
    private NvmeHost start(Consumer<SubsystemConfig> more) throws IOException {
        target = TestTarget.start(c -> {
            SubsystemConfig s = c.subsystems.get(0);
            more.accept(s);
        });
        ctrl = target.controller(1, TcpHostOptions.DEFAULT);
        return ctrl.admin();
    }

    private static SubsystemConfig oneOfTwo(SubsystemConfig s) {
        s.minCntlid = 100;
        s.maxCntlid = 199;
        return s;
    }

    @Test
    void anInstanceWithoutSharedStateAdvertisesNoReservations() throws IOException {
        NvmeHost admin = start(ReservationSharingTest::oneOfTwo);
        assertThat(u16(admin.identify(0x01, 0, 0).data(), 520) & ONCS_RESERVATIONS).as("ONCS bit 5").isZero();
        assertThat(u8(admin.identify(0x00, 1, 0).data(), 31)).as("RESCAP (CNS 00h)").isZero();
        assertThat(u8(admin.identify(0x08, 1, 0).data(), 2)).as("RESCAP (CNS 08h)").isZero();
        assertThat(u8(admin.identify(0x00, 1, 0).data(), 30)).as("NMIC: still reachable through several paths")
            .isEqualTo(1);
        NvmeHost io = ctrl.io(0);
        assertStatus(io.resvRegister(1, 0, false, 0, 0, KEY_A), 0, SC_INVALID_OPCODE, true);
        assertStatus(io.resvReport(1, true, 4096), 0, SC_INVALID_OPCODE, true);
        assertStatus(admin.execute(Sqe.of(NvmeHost.OPC_GET_FEATURES).nsid(1).cdw(10, FID_RESERVATION_PERSISTENCE)), 0,
            SC_INVALID_FIELD, true);
        assertThat(io.write(1, 0, block(3)).ok()).as("I/O goes on").isTrue();
        TargetConfig doc = target.nvmf().config();
        assertThat(doc.subsystems.get(0).namespaces.get(0).reservations).as("the document keeps its meaning").isNull();
    }

    @Test
    void localReservationsAreAdvertisedWhenTheConfigurationSaysSo() throws IOException {
        NvmeHost admin = start(s -> oneOfTwo(s).namespaces.forEach(n -> n.reservations = NamespaceConfig.RESERVATIONS_LOCAL));
        assertThat(u16(admin.identify(0x01, 0, 0).data(), 520) & ONCS_RESERVATIONS).isEqualTo(ONCS_RESERVATIONS);
        assertThat(u8(admin.identify(0x00, 1, 0).data(), 31)).as("RESCAP").isNotZero();
        assertThat(ctrl.io(0).resvRegister(1, 0, false, 0, 0, KEY_A).ok()).isTrue();
    }

    @Test
    void oneNamespaceOffLeavesTheOthersAndOncsAsTheyAre() throws IOException {
        NvmeHost admin = start(s -> s.namespaces.get(1).reservations = NamespaceConfig.RESERVATIONS_OFF);
        assertThat(u16(admin.identify(0x01, 0, 0).data(), 520) & ONCS_RESERVATIONS).as("nsid 1 has them")
            .isEqualTo(ONCS_RESERVATIONS);
        assertThat(u8(admin.identify(0x00, 1, 0).data(), 31)).as("RESCAP of nsid 1 (whole cntlid range: local)")
            .isNotZero();
        assertThat(u8(admin.identify(0x00, 3, 0).data(), 31)).as("RESCAP of nsid 3").isZero();
        assertStatus(ctrl.io(0).resvRegister(3, 0, false, 0, 0, KEY_A), 0, SC_INVALID_OPCODE, true);
        assertThat(ctrl.io(0).resvRegister(1, 0, false, 0, 0, KEY_A).ok()).isTrue();
    }
}
