package io.nvmf4j.service.api;

import io.nvmf4j.testhost.FreePorts;
import com.fasterxml.jackson.databind.JsonNode;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.service.api.Http.Res;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** GET and PUT /api/v1/config: export, import as a diff, all or nothing. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConfigImportTest {
    @TempDir
    Path dir;
    private TestService t;
    private Http http;

    @BeforeEach
    void start() throws Exception {
        t = TestService.start(dir, c -> c.subsystems.get(0).hosts.add(TestService.HOSTNQN));
        http = t.http;
    }

    @AfterEach
    void stop() {
        t.close();
    }

    private TargetConfig current() {
        Res r = http.get("/api/v1/config");
        assertThat(r.status()).isEqualTo(200);
        return ConfigStore.parse(r.body());
    }

    @Test
    void exportEqualsTheFile() {
        assertThat(ConfigStore.toJson(current())).isEqualTo(t.fileJson());
    }

    /** {@code engine} is a start-up setting: an import stores it for the next start; the running engine stays. */
    @Test
    void anImportedEngineIsStoredForTheNextStart() {
        TargetConfig want = current();
        assertThat(want.engine).isEqualTo("java");
        want.engine = "spdk";
        Res r = http.put("/api/v1/config", ConfigStore.toJson(want));
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        assertThat(current().engine).isEqualTo("spdk");
        assertThat(ConfigStore.parse(t.fileJson()).engine).isEqualTo("spdk");
        assertThat(t.service.target().name()).as("the running engine").isEqualTo("java");

        want.engine = "dpdk";
        Res bad = http.put("/api/v1/config", ConfigStore.toJson(want));
        assertThat(bad.status()).as("%s", bad).isEqualTo(400);
        assertThat(bad.body()).contains("engine: must be java or spdk, got dpdk");
    }

    @Test
    void importAppliesTheDifferenceAndKeepsIdentities() {
        TargetConfig before = current();
        TargetConfig want = current();
        int newPort = FreePorts.pick();
        want.bdevs.add(new BdevConfig("n1", "null", 512, 4096));
        SubsystemConfig s = want.subsystems.get(0);
        s.namespaces.add(new NamespaceConfig(2, "n1"));
        s.namespaces.get(0).nguid = null;  // left out: kept from the live namespace
        s.serial = null;                   // likewise
        s.hosts.clear();
        s.hosts.add("nqn.2026-11.io.nvmf4j:host-b");
        s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", newPort));
        SubsystemConfig added = new SubsystemConfig();
        added.nqn = "nqn.2026-11.io.nvmf4j:imported";
        want.subsystems.add(added);
        want.referrals.add(new ReferralConfig("tcp", "10.1.1.1", 8009));
        want.tcp.maxQueueDepth = 64;

        Res r = http.put("/api/v1/config", ConfigStore.toJson(want));
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        TargetConfig now = current();
        assertThat(ConfigStore.toJson(ConfigStore.parse(r.body()))).isEqualTo(ConfigStore.toJson(now));
        assertThat(ConfigStore.toJson(now)).isEqualTo(t.fileJson());
        SubsystemConfig live = now.subsystems.get(0);
        assertThat(live.serial).isEqualTo(before.subsystems.get(0).serial);
        assertThat(live.namespaces.get(0).nguid).isEqualTo(before.subsystems.get(0).namespaces.get(0).nguid);
        assertThat(live.namespaces).extracting(n -> n.nsid).containsExactly(1, 2);
        assertThat(live.hosts).containsExactly("nqn.2026-11.io.nvmf4j:host-b");
        assertThat(live.listeners).hasSize(2);
        assertThat(now.subsystems.get(1).serial).isNotBlank();
        assertThat(now.referrals).containsExactly(new ReferralConfig("tcp", "10.1.1.1", 8009));
        assertThat(now.tcp.maxQueueDepth).isEqualTo(64);
        assertThat(t.service.target().listeners().keySet()).contains(new ListenerConfig("tcp", "127.0.0.1", newPort));

        // and back again: the removed pieces go away, bdev n1 is deleted
        Res back = http.put("/api/v1/config", ConfigStore.toJson(before));
        assertThat(back.status()).as("%s", back).isEqualTo(200);
        assertThat(ConfigStore.toJson(current())).isEqualTo(ConfigStore.toJson(before));
        assertThat(t.fileJson()).isEqualTo(ConfigStore.toJson(before));
    }

    @Test
    void aChangedBdevDefinitionIsRemovedAndAddedWithItsNamespace() {
        TargetConfig want = current();
        want.bdevs.get(0).numBlocks = 4096;
        Res r = http.put("/api/v1/config", ConfigStore.toJson(want));
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        assertThat(current().bdevs.get(0).numBlocks).isEqualTo(4096);
        assertThat(current().subsystems.get(0).namespaces.get(0).nguid)
            .isEqualTo(want.subsystems.get(0).namespaces.get(0).nguid);
    }

    /** Pools are files made and removed by their own calls: an import that would change them is refused whole. */
    @Test
    void anImportThatChangesPoolsIs400AndChangesNothing() throws java.io.IOException {
        String before = t.liveJson();
        TargetConfig want = current();
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory(
            java.nio.file.Path.of(want.storage.fileDirectories.get(0)), "pool");
        want.pools.add(new io.nvmf4j.config.PoolConfig("p0", io.nvmf4j.config.PoolConfig.KIND_REFLINK_DIR,
            dir.toString()));
        want.bdevs.add(new BdevConfig("n1", "null", 512, 8));
        Res r = http.put("/api/v1/config", ConfigStore.toJson(want));
        assertThat(r.status()).as("%s", r).isEqualTo(400);
        assertThat(r.error()).startsWith("pools: an import cannot change pools");
        assertThat(t.liveJson()).isEqualTo(before);
    }

    @Test
    void anInvalidDocumentIs400WithTheFieldAndChangesNothing() {
        String before = t.liveJson();
        TargetConfig want = current();
        want.bdevs.get(0).type = "bogus";
        want.bdevs.add(new BdevConfig("n1", "null", 512, 8));
        Res r = http.put("/api/v1/config", ConfigStore.toJson(want));
        assertThat(r.status()).isEqualTo(400);
        assertThat(r.error()).isEqualTo("bdevs[0].type: must be malloc, null, file, rbd or error, got 'bogus'");
        assertThat(r.field()).isEqualTo("bdevs[0].type");
        Res unknown = http.put("/api/v1/config", "{\"cores\":1,\"subsystems\":[{\"nqn\":\"nqn.a:b\",\"colour\":1}]}");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.error()).isEqualTo("subsystems[0].colour: unknown field");
        assertThat(unknown.field()).isEqualTo("subsystems[0].colour");
        assertThat(t.liveJson()).isEqualTo(before);
        assertThat(t.fileJson()).isEqualTo(before);
    }

    @Test
    void aFailingStepRollsBackEveryStepDone() throws Exception {
        String before = t.liveJson();
        try (ServerSocket busy = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
            TargetConfig want = current();
            want.subsystems.get(0).hosts.clear();
            want.bdevs.get(0).numBlocks = 4096;  // m0 and namespace 1 are removed and added again
            want.bdevs.add(new BdevConfig("n1", "null", 512, 8));
            want.subsystems.get(0).listeners.add(new ListenerConfig("tcp", "127.0.0.1", busy.getLocalPort()));
            Res r = http.put("/api/v1/config", ConfigStore.toJson(want));
            assertThat(r.status()).as("%s", r).isEqualTo(409);
            assertThat(r.error()).isEqualTo("address 127.0.0.1:" + busy.getLocalPort() + " is already in use (nothing was changed)");
        }
        assertThat(t.liveJson()).isEqualTo(before);
        assertThat(t.fileJson()).isEqualTo(before);
        JsonNode hosts = http.get("/api/v1/subsystems/" + Http.enc(TestService.NQN) + "/hosts").json();
        assertThat(hosts).hasSize(1);
    }

    /**
     * Found by the REST fuzz (seed -2418598554171413449): an import compared engine, cores, tcp and api with the
     * live document but not rdma and spdk, so importing a document after PUT /transports/rdma left the RDMA
     * settings as the PUT had made them.
     */
    @Test
    void anImportPutsTheRdmaAndSpdkSettingsBack() {
        TargetConfig before = current();
        TargetConfig changed = current();
        changed.rdma.maxReadDepth = 255;
        changed.rdma.inCapsuleDataSize = 16384;
        Res put = http.put("/api/v1/transports/rdma", ConfigStore.mapper().valueToTree(changed.rdma).toString());
        assertThat(put.status()).as("%s", put).isEqualTo(200);
        assertThat(current().rdma.maxReadDepth).isEqualTo(255);
        changed = current();
        changed.spdk.memSizeMb = 2048;
        assertThat(http.put("/api/v1/config", ConfigStore.toJson(changed)).status()).isEqualTo(200);
        assertThat(current().spdk.memSizeMb).isEqualTo(2048);

        Res back = http.put("/api/v1/config", ConfigStore.toJson(before));
        assertThat(back.status()).as("%s", back).isEqualTo(200);
        assertThat(current().rdma.maxReadDepth).isEqualTo(16);
        assertThat(current().rdma.inCapsuleDataSize).isEqualTo(before.rdma.inCapsuleDataSize);
        assertThat(current().spdk.memSizeMb).isEqualTo(before.spdk.memSizeMb);
        assertThat(t.liveJson()).isEqualTo(ConfigStore.toJson(before));
        assertThat(t.fileJson()).isEqualTo(ConfigStore.toJson(before));
    }

    /**
     * Found by the REST fuzz (seed 3504604729062765688): an import kept the bdevs that stay where they were and
     * appended the ones it added, so the document read back after importing the same document depended on what
     * was there before. Now the lists come back in the imported order.
     */
    @Test
    void theDocumentReadBackIsTheOneImportedInItsOrder() {
        TargetConfig before = current();
        TargetConfig want = current();
        want.bdevs.add(new BdevConfig("n1", "null", 512, 8));
        want.bdevs.add(new BdevConfig("n2", "null", 512, 8));
        want.referrals.add(new ReferralConfig("tcp", "10.1.1.1", 8009));
        want.referrals.add(new ReferralConfig("tcp", "10.1.1.2", 8009));
        SubsystemConfig s = want.subsystems.get(0);
        s.hosts.add("nqn.2026-11.io.nvmf4j:host-b");
        assertThat(http.put("/api/v1/config", ConfigStore.toJson(want)).status()).isEqualTo(200);
        assertThat(current().bdevs).extracting(b -> b.name).containsExactly("m0", "n1", "n2");

        // n1 goes, then comes back first: read back first, not appended
        want.bdevs.remove(1);
        assertThat(http.put("/api/v1/config", ConfigStore.toJson(want)).status()).isEqualTo(200);
        want = current();
        want.bdevs.add(0, new BdevConfig("n1", "null", 512, 8));
        java.util.Collections.reverse(want.referrals);
        java.util.Collections.reverse(want.subsystems.get(0).hosts);
        Res r = http.put("/api/v1/config", ConfigStore.toJson(want));
        assertThat(r.status()).as("%s", r).isEqualTo(200);
        TargetConfig now = current();
        assertThat(now.bdevs).extracting(b -> b.name).containsExactly("n1", "m0", "n2");
        assertThat(now.referrals).extracting(x -> x.address).containsExactly("10.1.1.2", "10.1.1.1");
        assertThat(now.subsystems.get(0).hosts).containsExactly("nqn.2026-11.io.nvmf4j:host-b", TestService.HOSTNQN);
        assertThat(t.fileJson()).isEqualTo(ConfigStore.toJson(now));

        assertThat(http.put("/api/v1/config", ConfigStore.toJson(before)).status()).isEqualTo(200);
        assertThat(t.liveJson()).isEqualTo(ConfigStore.toJson(before));
    }
}
