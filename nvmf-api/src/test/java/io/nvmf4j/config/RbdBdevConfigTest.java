package io.nvmf4j.config;

import io.nvmf4j.engine.Engines;
import org.junit.jupiter.api.Test;

import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/** The config rules for {@code rbd} bdevs, each refusal with the field and the reason. */
class RbdBdevConfigTest {
    private static TargetConfig config(Consumer<BdevConfig> rbd) {
        TargetConfig c = new TargetConfig();
        BdevConfig b = new BdevConfig("ceph0", "rbd", 512, 2048);
        b.pool = "rbd";
        b.image = "vol1";
        b.cephConf = "/etc/ceph/ceph.conf";
        b.clientName = "client.nvmf4j";
        b.keyring = "/etc/ceph/ceph.client.nvmf4j.keyring";
        b.create = true;
        rbd.accept(b);
        c.bdevs.add(b);
        return c;
    }

    private static String problems(TargetConfig c) {
        return Refusals.problems(c);
    }

    @Test
    void aCompleteRbdBdevValidatesAndTheDefaultsAreNamed() {
        assertThatCode(() -> ConfigValidator.validate(config(b -> { }))).doesNotThrowAnyException();
        assertThatCode(() -> ConfigValidator.validate(config(b -> {
            b.cephConf = null;
            b.clientName = null;
            b.keyring = null;
            b.create = null;
            b.numBlocks = 0;
        }))).as("Ceph's default config search, client.admin, the image's size").doesNotThrowAnyException();
        BdevConfig b = config(x -> { }).bdevs.get(0);
        b.clientName = null;
        assertThat(b.clientNameOrDefault()).isEqualTo("client.admin");
        assertThat(b.timeoutSecondsOrDefault()).isEqualTo(15);
    }

    @Test
    void eachBadFieldIsNamed() {
        assertThat(problems(config(b -> b.pool = null))).contains("bdevs[0].pool: missing for an rbd bdev");
        assertThat(problems(config(b -> b.image = " "))).contains("bdevs[0].image: missing for an rbd bdev");
        assertThat(problems(config(b -> b.image = "a/b"))).contains("bdevs[0].image: must be 1..255 characters"
            + " without '/', '@' or whitespace, got 'a/b'");
        assertThat(problems(config(b -> b.pool = "p@s"))).contains("bdevs[0].pool: must be");
        assertThat(problems(config(b -> b.cephConf = "ceph.conf"))).contains("bdevs[0].cephConf: must be an absolute path");
        assertThat(problems(config(b -> b.keyring = "k"))).contains("bdevs[0].keyring: must be an absolute path");
        assertThat(problems(config(b -> b.clientName = "nvmf4j"))).contains("bdevs[0].clientName: must be client.NAME");
        assertThat(problems(config(b -> b.numBlocks = 0))).contains("bdevs[0].numBlocks: must be positive with create");
        assertThat(problems(config(b -> b.timeoutSeconds = 0))).contains("bdevs[0].timeoutSeconds: must be 1..300, got 0");
        assertThat(problems(config(b -> b.path = "/x"))).contains("belong to file bdevs, not rbd");
    }

    /**
     * An OSD failover Ceph recovers from must not become an I/O error: by default an I/O waits longer than Ceph's own
     * detection of a failed OSD (osd_heartbeat_grace 20 s + osd_heartbeat_interval 6 s, then the new map and
     * peering), and ends within the target's Command Quiesce Time.
     */
    @Test
    void theOsdOpTimeoutSitsAboveCephsFailureDetectionAndBelowTheCommandQuiesceTime() {
        BdevConfig b = config(x -> { }).bdevs.get(0);
        int grace = 20;
        int interval = 6;
        assertThat(b.osdOpTimeoutSecondsOrDefault()).as("rados_osd_op_timeout by default")
            .isGreaterThan(grace + interval + 10);
        assertThat(b.osdOpTimeoutSecondsOrDefault() * 1000).isLessThan(new TargetConfig().commandQuiesceTimeMsOrDefault());
        assertThat(problems(config(x -> x.osdOpTimeoutSeconds = 61)))
            .contains("bdevs[0].osdOpTimeoutSeconds: must be 1..60, got 61");
        TargetConfig tight = config(x -> x.osdOpTimeoutSeconds = 30);
        tight.commandQuiesceTimeMs = 30_000;
        assertThat(problems(tight)).contains("bdevs[0].osdOpTimeoutSeconds: 30 s is not below commandQuiesceTimeMs"
            + " 30000 (a lost controller's commands must end within the Command Quiesce Time)");
    }

    /** librbd's cache only on an image no other gateway serves; off by default. */
    @Test
    void theCacheIsOffByDefaultAndRefusedWhereAnotherGatewayMayServeTheImage() {
        assertThat(config(x -> { }).bdevs.get(0).cacheOrDefault()).isFalse();
        TargetConfig shared = config(x -> x.cache = true);
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:rbd";
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "ceph0"));
        shared.subsystems.add(s);
        assertThat(problems(shared)).contains("bdevs[0].cache: librbd's cache is for an image one gateway serves, but"
            + " a namespace on it shares its reservations with other gateways");
        s.namespaces.get(0).reservations = NamespaceConfig.RESERVATIONS_LOCAL;
        assertThatCode(() -> ConfigValidator.validate(shared)).as("one gateway (reservations local)")
            .doesNotThrowAnyException();
        assertThat(problems(config(x -> {
            x.cache = true;
            x.exclusiveLock = true;
        }))).contains("bdevs[0].cache: librbd's cache is for an image one gateway serves, but exclusiveLock is set");
    }

    @Test
    void rbdFieldsOnOtherTypesAreRefused() {
        TargetConfig c = new TargetConfig();
        BdevConfig m = new BdevConfig("m0", "malloc", 512, 2048);
        m.pool = "rbd";
        c.bdevs.add(m);
        BdevConfig n = new BdevConfig("n0", "null", 512, 2048);
        n.exclusiveLock = true;
        c.bdevs.add(n);
        String refused = ": pool, image, cephConf, clientName, keyring, create, timeoutSeconds, osdOpTimeoutSeconds,"
            + " cache and exclusiveLock belong to rbd bdevs";
        assertThat(problems(c)).contains("bdevs[0]" + refused, "bdevs[1]" + refused);
    }

    @Test
    void theSpdkEngineRefusesRbdBdevsSayingWhy() {
        TargetConfig c = config(b -> { });
        c.engine = Engines.SPDK;
        assertThat(problems(c)).contains("bdevs[0].type: rbd bdevs are java engine only (the spdk engine's SPDK is"
            + " built without --with-rbd, so SPDK's rbd bdev module is not there); use engine java");
    }
}
