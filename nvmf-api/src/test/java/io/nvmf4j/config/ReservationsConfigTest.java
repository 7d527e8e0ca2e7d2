package io.nvmf4j.config;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** A namespace's {@code reservations}: its values, where {@code shared} is possible, and what is meant when absent. */
class ReservationsConfigTest {
    private static TargetConfig config(String type, String reservations) {
        TargetConfig c = new TargetConfig();
        BdevConfig b = new BdevConfig("b0", type, 512, 2048);
        if ("rbd".equals(type)) {
            b.pool = "rbd";
            b.image = "img";
            b.cephConf = "/etc/ceph/ceph.conf";
            b.clientName = "client.admin";
            b.keyring = "/etc/ceph/ceph.client.admin.keyring";
        }
        c.bdevs.add(b);
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:resv";
        s.allowAnyHost = true;
        NamespaceConfig n = new NamespaceConfig(1, "b0");
        n.reservations = reservations;
        s.namespaces.add(n);
        c.subsystems.add(s);
        return c;
    }

    private static String mode(TargetConfig c) {
        return c.subsystems.get(0).namespaces.get(0).reservationsOrDefault(c, c.subsystems.get(0));
    }

    @Test
    void badValuesAreRefusedNamingTheField() {
        assertThat(Refusals.problems(config("malloc", "global"))).contains(
            "subsystems[0].namespaces[0].reservations: must be shared, local, off, got global");
        assertThat(Refusals.problems(config("malloc", "shared"))).contains(
            "subsystems[0].namespaces[0].reservations: shared keeps the reservation in an rbd image, which every"
                + " instance reads; bdev 'b0' is malloc (use local when this instance alone exports the namespace,"
                + " else off)");
        TargetConfig spdk = config("malloc", "off");
        spdk.engine = Engines.SPDK;
        assertThat(Refusals.problems(spdk)).contains("subsystems[0].namespaces[0].reservations: the spdk engine keeps"
            + " SPDK's own reservation in each instance: local only, got off");
    }

    @Test
    void theValuesThatHoldAreAccepted() {
        for (String v : NamespaceConfig.RESERVATIONS) {
            if (!NamespaceConfig.RESERVATIONS_SHARED.equals(v)) {
                assertThatCode(() -> ConfigValidator.validate(config("malloc", v))).doesNotThrowAnyException();
            }
            assertThatCode(() -> ConfigValidator.validate(config("rbd", v))).doesNotThrowAnyException();
        }
        TargetConfig wrapped = config("rbd", "shared");
        BdevConfig e = new BdevConfig("e0", "error", 512, 0);
        e.base = "b0";
        wrapped.bdevs.add(e);
        wrapped.subsystems.get(0).namespaces.get(0).bdev = "e0";
        assertThatCode(() -> ConfigValidator.validate(wrapped)).as("an error bdev over rbd shares the image's state")
            .doesNotThrowAnyException();
    }

    @Test
    void absentMeansSharedOnRbdOffForOneOfSeveralInstancesElseLocal() {
        assertThat(mode(config("rbd", null))).isEqualTo("shared");
        assertThat(mode(config("malloc", null))).isEqualTo("local");
        TargetConfig several = config("file", null);
        several.subsystems.get(0).minCntlid = 100;
        several.subsystems.get(0).maxCntlid = 199;
        assertThat(mode(several)).as("a narrowed cntlid range: several instances export the subsystem").isEqualTo("off");
        TargetConfig rbdSeveral = config("rbd", null);
        rbdSeveral.subsystems.get(0).minCntlid = 100;
        assertThat(mode(rbdSeveral)).isEqualTo("shared");
        TargetConfig spdk = config("malloc", null);
        spdk.engine = Engines.SPDK;
        spdk.subsystems.get(0).minCntlid = 100;
        assertThat(mode(spdk)).isEqualTo("local");
    }
}
