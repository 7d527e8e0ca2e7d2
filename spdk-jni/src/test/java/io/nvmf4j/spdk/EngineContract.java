package io.nvmf4j.spdk;

import ch.qos.logback.classic.spi.ILoggingEvent;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.engine.AnaGroupInfo;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.ConfigDocument;
import io.nvmf4j.engine.ControllerInfo;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.ListenerState;
import io.nvmf4j.engine.PersistenceException;
import io.nvmf4j.engine.SubsystemStats;
import io.nvmf4j.it.AnaLogs;
import io.nvmf4j.it.Le;
import io.nvmf4j.it.LogCapture;
import io.nvmf4j.it.TestTarget;
import io.nvmf4j.testhost.Completion;
import io.nvmf4j.testhost.NvmeController;
import io.nvmf4j.testhost.NvmeHost;
import io.nvmf4j.testhost.TcpHostOptions;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What every engine does, seen from a host on loopback (nvmf-target's test host) and from the control plane
 * ({@link ConfigController}): a concrete subclass starts one engine for its class in {@code @BeforeAll} (SPDK starts once
 * per JVM, and spdk-jni's surefire forks a JVM per class). Where the engines legitimately differ, the
 * subclass answers the hooks at the end with its own documented behaviour.
 *
 * <p>Every test leaves the target as it found it: what it adds it removes again.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
abstract class EngineContract {
    static final int AEC_NS_ATTRIBUTE = 1 << 8;
    static final int AEC_DISCOVERY = 1 << 31;
    static final int FID_ASYNC_EVENT_CONFIG = 0x0B;
    static final int LID_CHANGED_NS = 0x04;
    static final int LID_DISCOVERY = 0x70;
    static final int DISCOVERY_ENTRY = 1024;
    static final int SC_INVALID_NAMESPACE = 0x0B;
    static final String OTHER_HOSTNQN = "nqn.2014-08.org.nvmexpress:uuid:7c0e2b1a-44d3-4f6e-9b1c-0000000000ff";
    /**
     * How long a test waits for what the spdk engine learns at its controller watch's polls (every
     * {@link SpdkEngine#CONTROLLER_POLL_MS} ms, each a call on SPDK's app thread): on a busy machine, many polls.
     */
    static final Duration WATCH_WAIT = Duration.ofSeconds(30);

    static EngineTarget target;

    static ConfigController<Engine> engine() {
        return target.engine;
    }

    /** Closing the engine disconnects the hosts still connected (and, for SPDK, stops it cleanly). */
    @AfterAll
    static void stop() throws Exception {
        if (target == null) {
            return;
        }
        try (NvmeController c = target.controller(1)) {
            target.close();
            assertThat(c.admin().queue().awaitClosed(Duration.ofSeconds(10))).as("admin queue closed by close()")
                .isTrue();
            assertThat(c.io(0).queue().awaitClosed(Duration.ofSeconds(10))).as("I/O queue closed by close()").isTrue();
        } finally {
            target.close();
            target = null;
        }
    }

    // ------------------------------------------------------------------ hooks for the engines' differences

    /**
     * Whether a file bdev on a file longer than numBlocks serves its first numBlocks (java) or is refused (spdk:
     * SPDK's aio bdev serves a file's whole size).
     */
    abstract boolean servesFirstNumBlocksOfALongerFile();

    /**
     * Whether the discovery log lists the current discovery subsystem (subtype 3) on every listener (spdk) or
     * only on the one the host came through (java).
     */
    abstract boolean listsTheDiscoverySubsystemOnEveryListener();

    // ------------------------------------------------------------------ connect, identify

    /**
     * Both engines log a controller coming and going with subsystem, host NQN, the host's ip:port, transport,
     * cntlid and kato, and on the way out its I/O queue count (spdk: from its controller lists, polled).
     */
    @Test
    void controllersComingAndGoingAreLogged() throws Exception {
        try (LogCapture log = new LogCapture("io.nvmf4j.engine.ControllerLog")) {
            String host;
            int cntlid;
            try (NvmeController c = target.controller(2)) {
                cntlid = c.cntlid();
                host = TestTarget.ADDRESS + ":" + c.admin().queue().localPort();
                String connected = "controller " + cntlid + " of " + TestTarget.SUBNQN + " connected: host "
                    + TestTarget.HOSTNQN + " at " + host + " over tcp, kato " + TestTarget.KATO_MS + " ms";
                ILoggingEvent in = log.await(connected, WATCH_WAIT);
                assertThat(LogCapture.keyValues(in)).containsEntry("subnqn", TestTarget.SUBNQN)
                    .containsEntry("hostnqn", TestTarget.HOSTNQN).containsEntry("host", host)
                    .containsEntry("transport", "tcp").containsEntry("cntlid", cntlid)
                    .containsEntry("kato_ms", TestTarget.KATO_MS);
                if (engine().engine() instanceof SpdkEngine spdk) {
                    // the spdk engine learns of I/O queues at its controller watch's polls: wait for one that saw both
                    long deadline = System.nanoTime() + WATCH_WAIT.toNanos();
                    while (spdk.ioQueuesSeen(TestTarget.SUBNQN, cntlid) < 2) {
                        assertThat(System.nanoTime()).as("the controller watch saw 2 I/O queues within %s", WATCH_WAIT)
                            .isLessThan(deadline);
                        Thread.sleep(SpdkEngine.CONTROLLER_POLL_MS / 5);
                    }
                }
            }
            ILoggingEvent out = log.await("controller " + cntlid + " of " + TestTarget.SUBNQN + " disconnected: host "
                + TestTarget.HOSTNQN + " at " + host + " over tcp, 2 I/O queue(s), up ", WATCH_WAIT);
            assertThat(LogCapture.keyValues(out)).containsEntry("io_queues", 2).containsEntry("host", host)
                .containsKey("reason");
        }
    }

    @Test
    void connectsAdminAndIoQueuesAndListsTheController() throws Exception {
        try (NvmeController c = target.controller(2)) {
            assertThat(c.cntlid()).isBetween(1, 0xFFEF);
            ControllerInfo info = controller(TestTarget.SUBNQN, c.cntlid());
            assertThat(info.hostnqn()).isEqualTo(TestTarget.HOSTNQN);
            assertThat(info.hostid()).as("hostid").isEqualTo(c.hostid());
            assertThat(info.kato()).as("kato").isEqualTo(TestTarget.KATO_MS);
            assertThat(info.queues()).extracting(ControllerInfo.Queue::qid).containsExactly(0, 1, 2);
            assertThat(info.address()).as("host address").contains("127.0.0.1:" + c.admin().queue().localPort());
            TestData.assertWriteReadBack(c.io(1), 1, 2048, 4096, 11);
        }
    }

    @Test
    void identifyControllerGivesSerialModelAndNqn() throws Exception {
        try (NvmeController c = target.controller(0)) {
            byte[] id = ok(c.admin().identify(0x01, 0, 0));
            assertThat(Le.slice(id, 4, 20)).as("SN").isEqualTo(Le.spacePadded(TestTarget.SERIAL, 20));
            assertThat(Le.slice(id, 24, 40)).as("MN").isEqualTo(Le.spacePadded(TestTarget.MODEL, 40));
            assertThat(Le.u16(id, 78)).as("CNTLID").isEqualTo(c.cntlid());
            assertThat(Le.cString(id, 768, 256)).as("SUBNQN").isEqualTo(TestTarget.SUBNQN);
        }
    }

    @Test
    void identifyNamespaceGivesTheConfiguredIdentifiers() throws Exception {
        try (NvmeController c = target.controller(0)) {
            byte[] ns = ok(c.admin().identify(0x00, 1, 0));
            assertThat(Le.u64(ns, 0)).as("NSZE").isEqualTo(TestTarget.NUM_BLOCKS);
            assertThat(Le.u8(ns, 130)).as("LBADS of LBAF0").isEqualTo(9);
            assertThat(Le.slice(ns, 104, 16)).as("NGUID").isEqualTo(Le.hex(TestTarget.NGUID));
            assertThat(Le.slice(ns, 120, 8)).as("EUI64").isEqualTo(Le.hex(TestTarget.EUI64));

            Map<Integer, byte[]> ids = descriptors(ok(c.admin().identify(0x03, 1, 0)));
            assertThat(ids.get(1)).as("EUI64 (NIDT 1)").isEqualTo(Le.hex(TestTarget.EUI64));
            assertThat(ids.get(2)).as("NGUID (NIDT 2)").isEqualTo(Le.hex(TestTarget.NGUID));
            assertThat(ids.get(3)).as("UUID (NIDT 3)").isEqualTo(uuidBytes(TestTarget.UUID));

            assertThat(activeNamespaces(c.admin())).containsExactly(1L, 3L);
        }
    }

    // ------------------------------------------------------------------ data path

    @Test
    void writesReadBackAtSeveralLbasAndSizes() throws Exception {
        try (NvmeController c = target.controller(1)) {
            NvmeHost io = c.io(0);
            TestData.assertWriteReadBack(io, 1, 0, 512, 1);
            TestData.assertWriteReadBack(io, 1, 7, 4096, 2);
            TestData.assertWriteReadBack(io, 1, 100, 8192, 3);
            TestData.assertWriteReadBack(io, 1, 1000, 65536, 4);
            TestData.assertWriteReadBack(io, 1, 5000, 131072, 5);
            TestData.assertWriteReadBack(io, 1, TestTarget.NUM_BLOCKS - 8, 4096, 6);
            TestData.assertWriteReadBack(io, 3, 17, 24576, 7);
            assertThat(ok(io.read(1, 7, 8))).as("an earlier write is still there after later ones")
                .isEqualTo(Le.random(4096, 2));
            Completion flush = io.flush(1);
            assertThat(flush.ok()).as("flush: %s", flush).isTrue();
        }
    }

    @Test
    void headerAndDataDigestsCarryIo() throws Exception {
        try (NvmeController c = NvmeController.open(TestTarget.ADDRESS, target.port(), TestTarget.SUBNQN,
            TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DIGESTS)) {
            assertThat(c.io(0).queue().icResp().headerDigest()).as("HDGST").isTrue();
            assertThat(c.io(0).queue().icResp().dataDigest()).as("DDGST").isTrue();
            TestData.assertWriteReadBack(c.io(0), 1, 3000, 4096, 111);
            TestData.assertWriteReadBack(c.io(0), 1, 3100, 131072, 112);
            assertThat(c.io(0).queue().protocolErrors()).as("digest errors seen by the host").isEmpty();
        }
    }

    @Test
    void ioBeyondTheNamespaceIsRefused() throws Exception {
        try (NvmeController c = target.controller(1)) {
            Completion r = c.io(0).read(1, TestTarget.NUM_BLOCKS - 1, 2);
            assertThat(r.ok()).as("read past the end: %s", r).isFalse();
            assertThat(r.sct()).as("SCT of %s", r).isZero();
            assertThat(r.sc()).as("SC (LBA out of range) of %s", r).isEqualTo(0x80);
            Completion unknown = c.io(0).read(2, 0, 1);
            assertThat(unknown.sc()).as("SC (invalid namespace) of %s", unknown).isEqualTo(SC_INVALID_NAMESPACE);
        }
    }

    @Test
    void fileBdevIsCreatedServesIoAndGrows(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("sub").resolve("disk.img");
        BdevConfig b = new BdevConfig("file0", "file", 512, 2048);
        b.path = file.toString();
        assertThatThrownBy(() -> engine().addBdev(b)).isInstanceOf(ConfigException.class)
            .hasMessageContaining(".path: directory " + file.getParent() + " does not exist");
        assertThat(dir.resolve("sub")).as("no directory is made").doesNotExist();
        java.nio.file.Files.createDirectory(dir.resolve("sub"));
        engine().addBdev(b);
        assertThat(file).as("created").exists().hasSize(2048 * 512);
        assertThat(java.nio.file.Files.getPosixFilePermissions(file)).as("mode 0600")
            .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        try (NvmeController c = target.controller(1)) {
            engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(6, "file0"));
            byte[] id = ok(c.admin().identify(0x00, 6, 0));
            assertThat(Le.u64(id, 0)).as("NSZE").isEqualTo(2048);
            assertThat(Le.u8(id, 130)).as("LBADS").isEqualTo(9);
            TestData.assertWriteReadBack(c.io(0), 6, 100, 65536, 81);
            TestData.assertWriteReadBack(c.io(0), 6, 2047, 512, 82);
            assertThat(c.io(0).flush(6).ok()).as("flush").isTrue();

            CompletableFuture<Completion> aer = armNamespaceEvents(c.admin());
            engine().growBdev("file0", 4096);
            assertNamespaceChangedEvent(aer.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(c.admin())).containsExactly(6L);
            assertThat(file).as("the file grew").hasSize(4096 * 512);
            assertThat(Le.u64(ok(c.admin().identify(0x00, 6, 0)), 0)).as("NSZE after growing").isEqualTo(4096);
            TestData.assertWriteReadBack(c.io(0), 6, 4000, 4096, 83);
            engine().removeNamespace(TestTarget.SUBNQN, 6);
        } finally {
            engine().removeBdev("file0");
        }
        byte[] onDisk = java.nio.file.Files.readAllBytes(file);
        assertThat(Le.slice(onDisk, 100 * 512, 65536)).as("the write is in the file").isEqualTo(Le.random(65536, 81));
    }

    /**
     * The newcomer's trial: a file bdev on /etc/passwd, through a symbolic link to it, or on a block device nobody
     * listed is refused by both engines (the shared validator), and the file is left alone.
     */
    @Test
    void fileBdevOutsideTheAllowedPlacesIsRefused(@TempDir Path dir) throws Exception {
        Path passwd = Path.of("/etc/passwd");
        long size = java.nio.file.Files.size(passwd);
        Path link = java.nio.file.Files.createSymbolicLink(dir.resolve("passwd.img"), passwd);
        for (String path : new String[] {passwd.toString(), link.toString(), "/dev/null"}) {
            BdevConfig b = new BdevConfig("evil0", "file", 512, 4096);
            b.path = path;
            assertThatThrownBy(() -> engine().addBdev(b)).as(path).isInstanceOf(ConfigException.class)
                .hasMessageContaining(".path: " + path + " is");
            assertThat(engine().configSnapshot().bdev("evil0")).isNull();
        }
        assertThat(java.nio.file.Files.size(passwd)).as("/etc/passwd untouched").isEqualTo(size);
    }

    @Test
    void fileLongerThanNumBlocks(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("long.img");
        java.nio.file.Files.write(file, new byte[4096 * 512]);
        BdevConfig b = new BdevConfig("long0", "file", 512, 2048);
        b.path = file.toString();
        if (servesFirstNumBlocksOfALongerFile()) {
            engine().addBdev(b);
            try (NvmeController c = target.controller(0)) {
                engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(8, "long0"));
                assertThat(Le.u64(ok(c.admin().identify(0x00, 8, 0)), 0)).as("NSZE").isEqualTo(2048);
                engine().removeNamespace(TestTarget.SUBNQN, 8);
            } finally {
                engine().removeBdev("long0");
            }
        } else {
            assertThatThrownBy(() -> engine().addBdev(b)).isInstanceOfSatisfying(ControlException.class, e -> {
                assertThat(e.kind()).isEqualTo(ControlException.Kind.INVALID);
                assertThat(e.getMessage()).contains("holds 4096 blocks, more than numBlocks 2048");
            });
            assertThat(engine().configSnapshot().bdev("long0")).isNull();
        }
        assertThat(file).as("the file is left as it was").hasSize(4096 * 512);
    }

    /**
     * Per-host masking: a namespace added with a hosts list is active only for those hosts. Identify's active list,
     * Identify Namespace (zeros, as for any inactive nsid) and I/O (Invalid Namespace) answer each host by its own
     * view; adding or removing a host changes that host's view alone and sends it the changed-namespace AEN and
     * the nsid in log page 04h.
     */
    @Test
    void aMaskedNamespaceIsSeenOnlyByItsHostsAndAViewChangeRaisesThatHostsAen() throws Exception {
        engine().addBdev(new BdevConfig("mask0", "null", 512, 2048));
        NamespaceConfig masked = new NamespaceConfig(9, "mask0");
        masked.hosts = new ArrayList<>(List.of(TestTarget.HOSTNQN));
        try (NvmeController a = target.controller(TestTarget.SUBNQN, TestTarget.HOSTNQN, 1);
             NvmeController b = target.controller(TestTarget.SUBNQN, OTHER_HOSTNQN, 1)) {
            CompletableFuture<Completion> aerA = armNamespaceEvents(a.admin());
            CompletableFuture<Completion> aerB = armNamespaceEvents(b.admin());
            engine().addNamespace(TestTarget.SUBNQN, masked);
            assertNamespaceChangedEvent(aerA.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(a.admin())).containsExactly(9L);
            assertThat(activeNamespaces(a.admin())).containsExactly(1L, 3L, 9L);
            assertThat(activeNamespaces(b.admin())).as("B does not see it").containsExactly(1L, 3L);
            assertThat(Le.u64(ok(a.admin().identify(0x00, 9, 0)), 0)).as("NSZE for A").isEqualTo(2048);
            assertThat(ok(b.admin().identify(0x00, 9, 0))).as("Identify Namespace for B: an inactive nsid")
                .containsOnly((byte) 0);
            assertThat(b.io(0).read(9, 0, 1).sc()).as("B reads it").isEqualTo(SC_INVALID_NAMESPACE);
            assertThat(ok(a.io(0).read(9, 0, 1))).hasSize(512);

            engine().addNamespaceHost(TestTarget.SUBNQN, 9, OTHER_HOSTNQN);
            assertNamespaceChangedEvent(aerB.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(b.admin())).containsExactly(9L);
            assertThat(activeNamespaces(b.admin())).containsExactly(1L, 3L, 9L);
            assertThat(ok(b.io(0).read(9, 0, 1))).hasSize(512);

            aerA = a.admin().asyncEventRequest();
            aerB = b.admin().asyncEventRequest();
            engine().removeNamespaceHost(TestTarget.SUBNQN, 9, TestTarget.HOSTNQN);
            assertNamespaceChangedEvent(aerA.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(a.admin())).containsExactly(9L);
            assertThat(activeNamespaces(a.admin())).containsExactly(1L, 3L);
            assertThat(a.io(0).read(9, 0, 1).sc()).as("A after its view changed").isEqualTo(SC_INVALID_NAMESPACE);
            assertThat(ok(b.io(0).read(9, 0, 1))).as("B still reads").hasSize(512);
            // B's view did not change, so B gets no event: shown without a wait by a later change that B alone
            // sees (nsid 10, masked to B), whose event must be the first B gets and name nsid 10 alone
            engine().addBdev(new BdevConfig("mask1", "null", 512, 2048));
            NamespaceConfig onlyB = new NamespaceConfig(10, "mask1");
            onlyB.hosts = new ArrayList<>(List.of(OTHER_HOSTNQN));
            engine().addNamespace(TestTarget.SUBNQN, onlyB);
            assertNamespaceChangedEvent(aerB.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(b.admin())).as("B's first event after A's view changed")
                .containsExactly(10L);
            engine().removeNamespace(TestTarget.SUBNQN, 10);
            engine().removeBdev("mask1");

            assertKind(() -> engine().addNamespaceHost(TestTarget.SUBNQN, 1, OTHER_HOSTNQN),
                ControlException.Kind.INVALID);
            assertKind(() -> engine().addNamespaceHost(TestTarget.SUBNQN, 9, OTHER_HOSTNQN),
                ControlException.Kind.CONFLICT);
            assertKind(() -> engine().removeNamespaceHost(TestTarget.SUBNQN, 9, TestTarget.HOSTNQN),
                ControlException.Kind.NOT_FOUND);
            assertThatThrownBy(() -> engine().addNamespaceHost(TestTarget.SUBNQN, 9, "not an nqn"))
                .isInstanceOf(ConfigException.class).hasMessageContaining(".hosts[1]: ");
            assertThat(engine().configSnapshot().subsystems.get(0).namespaces.stream().filter(x -> x.nsid == 9)
                .findFirst().orElseThrow().hosts).containsExactly(OTHER_HOSTNQN);
            engine().removeNamespace(TestTarget.SUBNQN, 9);
        } finally {
            if (engine().configSnapshot().subsystems.get(0).namespaces.stream().anyMatch(x -> x.nsid == 9)) {
                engine().removeNamespace(TestTarget.SUBNQN, 9);
            }
            if (engine().configSnapshot().subsystems.get(0).namespaces.stream().anyMatch(x -> x.nsid == 10)) {
                engine().removeNamespace(TestTarget.SUBNQN, 10);
            }
            if (engine().configSnapshot().bdev("mask1") != null) {
                engine().removeBdev("mask1");
            }
            engine().removeBdev("mask0");
        }
    }

    @Test
    void grownBdevRaisesAnAenAndTheHostSeesTheNewSize() throws Exception {
        engine().addBdev(new BdevConfig("grow0", "null", 512, 2048));
        try (NvmeController c = target.controller(0)) {
            NvmeHost admin = c.admin();
            CompletableFuture<Completion> aer = armNamespaceEvents(admin);
            engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(5, "grow0"));
            assertNamespaceChangedEvent(aer.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(admin)).containsExactly(5L);

            aer = admin.asyncEventRequest();
            engine().growBdev("grow0", 4096);
            assertNamespaceChangedEvent(aer.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(admin)).containsExactly(5L);
            assertThat(Le.u64(ok(admin.identify(0x00, 5, 0)), 0)).as("NSZE after growing").isEqualTo(4096);
            assertThat(engine().configSnapshot().bdev("grow0").numBlocks).isEqualTo(4096);
            assertKind(() -> engine().growBdev("grow0", 1024), ControlException.Kind.INVALID);
            assertKind(() -> engine().growBdev("m0", TestTarget.NUM_BLOCKS * 2), ControlException.Kind.INVALID);
            engine().removeNamespace(TestTarget.SUBNQN, 5);
        } finally {
            engine().removeBdev("grow0");
        }
    }

    // ------------------------------------------------------------------ hosts

    @Test
    void restrictedSubsystemAdmitsOnlyAllowedHostsAndRemoveHostDisconnects() throws Exception {
        assertThatThrownBy(() -> target.controller(TestTarget.RESTRICTED_NQN, TestTarget.HOSTNQN, 1))
            .as("an unknown host's Connect").hasMessageContaining("sc=0x84");
        String extra = "nqn.2014-08.org.nvmexpress:uuid:7c0e2b1a-44d3-4f6e-9b1c-0000000000e1";
        engine().addHost(TestTarget.RESTRICTED_NQN, extra);
        try (NvmeController allowed = target.controller(TestTarget.RESTRICTED_NQN,
            TestTarget.ALLOWED_HOSTNQN, 1);
             NvmeController added = target.controller(TestTarget.RESTRICTED_NQN, extra, 1)) {
            TestData.assertWriteReadBack(added.io(0), 1, 0, 4096, 21);
            assertThat(engine().controllers(TestTarget.RESTRICTED_NQN)).extracting(ControllerInfo::hostnqn)
                .containsExactlyInAnyOrder(TestTarget.ALLOWED_HOSTNQN, extra);

            engine().removeHost(TestTarget.RESTRICTED_NQN, extra);
            assertThat(added.admin().queue().awaitClosed(Duration.ofSeconds(10))).as("removed host's admin queue")
                .isTrue();
            assertThat(added.io(0).queue().awaitClosed(Duration.ofSeconds(10))).as("removed host's I/O queue")
                .isTrue();
            assertThat(ok(allowed.io(0).read(1, 0, 8))).as("the other host still reads")
                .isEqualTo(Le.random(4096, 21));
            awaitControllers(TestTarget.RESTRICTED_NQN, 1);
        }
        assertThatThrownBy(() -> target.controller(TestTarget.RESTRICTED_NQN, extra, 0))
            .as("the removed host's new Connect").hasMessageContaining("sc=0x84");
    }

    @Test
    void subsystemAddedAndRemovedOnASharedListener() throws Exception {
        engine().addBdev(new BdevConfig("sub0", "malloc", 512, 2048));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:contract-added";
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "sub0"));
        s.listeners.add(target.listener);
        try (NvmeController disc = target.discovery(OTHER_HOSTNQN)) {
            assertThat(disc.admin().setFeatures(FID_ASYNC_EVENT_CONFIG, AEC_DISCOVERY).ok()).isTrue();
            CompletableFuture<Completion> aer = disc.admin().asyncEventRequest();
            SubsystemConfig added = engine().addSubsystem(s);
            assertThat(added.serial).as("serial generated").isNotBlank();
            Completion event = aer.get(10, TimeUnit.SECONDS);
            assertThat(event.dw0() & 0x7).as("event type: notice").isEqualTo(2);
            assertThat((event.dw0() >>> 16) & 0xFF).as("log page").isEqualTo(LID_DISCOVERY);
            assertThat(entries(readDiscoveryLog(disc.admin()))).extracting(Entry::subnqn).contains(s.nqn);
        }
        try (NvmeController c = target.controller(s.nqn, TestTarget.HOSTNQN, 1)) {
            TestData.assertWriteReadBack(c.io(0), 1, 0, 4096, 91);
            engine().setAllowAnyHost(s.nqn, false);
            assertThat(c.admin().queue().awaitClosed(Duration.ofSeconds(10))).as("a host no longer allowed").isTrue();
        }
        engine().addHost(s.nqn, TestTarget.HOSTNQN);
        try (NvmeController c = target.controller(s.nqn, TestTarget.HOSTNQN, 1);
             NvmeController other = target.controller(1)) {
            assertThat(ok(c.io(0).read(1, 0, 8))).isEqualTo(Le.random(4096, 91));
            engine().removeSubsystem(s.nqn);
            assertThat(c.admin().queue().awaitClosed(Duration.ofSeconds(10))).as("host of the removed subsystem")
                .isTrue();
            TestData.assertWriteReadBack(other.io(0), 1, 900, 4096, 92);
        }
        assertThat(engine().listeners()).as("the shared listener stays").containsKey(target.listener);
        try (NvmeController again = target.controller(1)) {
            TestData.assertWriteReadBack(again.io(0), 1, 901, 4096, 93);
        }
        engine().removeBdev("sub0");
        assertKind(() -> engine().controllers(s.nqn), ControlException.Kind.NOT_FOUND);
    }

    // ------------------------------------------------------------------ namespaces while connected

    @Test
    void namespaceAddedAndRemovedWhileConnectedRaisesAens() throws Exception {
        engine().addBdev(new BdevConfig("aen0", "malloc", 512, 4096));
        try (NvmeController c = target.controller(1)) {
            NvmeHost admin = c.admin();
            CompletableFuture<Completion> aer = armNamespaceEvents(admin);

            NamespaceConfig n = engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(0, "aen0"));
            assertThat(n.nsid).as("lowest free nsid (1 and 3 are taken)").isEqualTo(2);
            assertThat(n.nguid).as("generated NGUID").hasSize(32);
            assertNamespaceChangedEvent(aer.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(admin)).containsExactly(2L);
            assertThat(activeNamespaces(admin)).containsExactly(1L, 2L, 3L);
            byte[] id = ok(admin.identify(0x00, 2, 0));
            assertThat(Le.u64(id, 0)).as("NSZE").isEqualTo(4096);
            assertThat(Le.slice(id, 104, 16)).as("NGUID").isEqualTo(Le.hex(n.nguid));
            TestData.assertWriteReadBack(c.io(0), 2, 10, 8192, 31);

            aer = admin.asyncEventRequest();
            engine().removeNamespace(TestTarget.SUBNQN, 2);
            assertNamespaceChangedEvent(aer.get(10, TimeUnit.SECONDS));
            assertThat(changedNamespaces(admin)).containsExactly(2L);
            assertThat(activeNamespaces(admin)).containsExactly(1L, 3L);
            Completion gone = c.io(0).read(2, 0, 1);
            assertThat(gone.sc()).as("read of the removed namespace: %s", gone).isEqualTo(SC_INVALID_NAMESPACE);
        } finally {
            engine().removeBdev("aen0");
        }
        assertThat(engine().configSnapshot().bdev("aen0")).isNull();
    }

    // ------------------------------------------------------------------ ANA

    /**
     * ANA, as the two-gateway setup uses it: a subsystem on two listeners (two paths), namespace 1 in group 1 and
     * namespace 2 in group 2; path A has group 2 non-optimized, path B group 1 inaccessible. Each path's ANA log
     * (0Ch) gives its own states, I/O through an inaccessible path fails with the path status (no DNR: the host
     * fails over), and a live state change raises the ANA change event on that path only.
     */
    @Test
    void anaStatesPerListenerWithLiveChangesEventsAndPathStatus() throws Exception {
        String nqn = "nqn.2024-01.io.nvmf4j:contract-ana";
        engine().addBdev(new BdevConfig("ana1", "malloc", 512, 2048));
        engine().addBdev(new BdevConfig("ana2", "malloc", 512, 2048));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = nqn;
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "ana1"));
        NamespaceConfig second = new NamespaceConfig(2, "ana2");
        second.anaGroup = 2;
        s.namespaces.add(second);
        ListenerConfig pathA = new ListenerConfig("tcp", "127.0.0.4", 0);
        pathA.anaStates = new LinkedHashMap<>(Map.of("2", "non-optimized"));
        ListenerConfig pathB = new ListenerConfig("tcp", "127.0.0.5", 0);
        pathB.anaStates = new LinkedHashMap<>(Map.of("1", "inaccessible"));
        s.listeners.add(pathA);
        s.listeners.add(pathB);
        engine().addSubsystem(s);
        try (NvmeController a = NvmeController.open("127.0.0.4", target.port(pathA), nqn, TestTarget.HOSTNQN,
                 TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT);
             NvmeController b = NvmeController.open("127.0.0.5", target.port(pathB), nqn, TestTarget.HOSTNQN,
                 TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            byte[] id = ok(a.admin().identify(0x01, 0, 0));
            assertThat(Le.u8(id, 76) & 0x8).as("CMIC bit 3: ANA reporting").isEqualTo(0x8);
            assertThat(Le.u32(id, 92) & AnaLogs.AEC_ANA_CHANGE).as("OAES: ANA change notices").isNotZero();
            assertThat(Le.u32(ok(a.admin().identify(0x00, 2, 0)), 92)).as("ANAGRPID of nsid 2").isEqualTo(2);
            assertThat(AnaLogs.groups(AnaLogs.read(a.admin(), false))).as("through A").containsExactly(
                new int[] {1, AnaLogs.ANAS_OPTIMIZED, 1}, new int[] {2, AnaLogs.ANAS_NON_OPTIMIZED, 2});
            assertThat(AnaLogs.groups(AnaLogs.read(b.admin(), false))).as("through B").containsExactly(
                new int[] {1, AnaLogs.ANAS_INACCESSIBLE, 1}, new int[] {2, AnaLogs.ANAS_OPTIMIZED, 2});

            byte[] data = Le.random(4096, 61);
            assertThat(a.io(0).write(1, 10, data).ok()).as("optimized through A").isTrue();
            assertThat(a.io(0).read(2, 10, 8).ok()).as("non-optimized serves I/O").isTrue();
            assertPathStatus(b.io(0).read(1, 10, 8), "read of group 1 through B");
            assertPathStatus(b.io(0).write(1, 10, data), "write of group 1 through B");
            assertThat(b.io(0).read(2, 10, 8).ok()).as("group 2 through B").isTrue();

            assertThat(a.admin().setFeatures(FID_ASYNC_EVENT_CONFIG, AnaLogs.AEC_ANA_CHANGE).ok()).isTrue();
            assertThat(b.admin().setFeatures(FID_ASYNC_EVENT_CONFIG, AnaLogs.AEC_ANA_CHANGE).ok()).isTrue();
            CompletableFuture<Completion> aerA = a.admin().asyncEventRequest();
            CompletableFuture<Completion> aerB = b.admin().asyncEventRequest();
            engine().setAnaState(nqn, pathA, 1, "inaccessible");
            Completion event = aerA.get(10, TimeUnit.SECONDS);
            assertThat(event.dw0()).as("notice, ANA change, log page 0Ch: %s", event).isEqualTo(AnaLogs.AEN_ANA_CHANGE);
            assertThat(AnaLogs.groups(AnaLogs.read(a.admin(), false)).get(0)).as("group 1 through A")
                .containsExactly(1, AnaLogs.ANAS_INACCESSIBLE, 1);
            assertPathStatus(a.io(0).read(1, 10, 8), "read of group 1 through A, now inaccessible");
            TestTarget.settleAdmin(b.admin());
            assertThat(aerB).as("B's states did not change").isNotDone();

            engine().setAnaState(nqn, pathB, 1, "optimized");
            assertThat(aerB.get(10, TimeUnit.SECONDS).dw0()).as("B: ANA change").isEqualTo(AnaLogs.AEN_ANA_CHANGE);
            assertThat(ok(b.io(0).read(1, 10, 8))).as("B took group 1 over: the data written through A")
                .isEqualTo(data);
            assertThat(engine().anaGroups(nqn, pathB)).containsExactly(
                new AnaGroupInfo(1, "optimized", List.of(1)), new AnaGroupInfo(2, "optimized", List.of(2)));
            SubsystemConfig saved = ConfigDocument.subsystem(engine().configSnapshot(), nqn);
            assertThat(saved.listeners.get(0).anaStates).as("A's states in the document")
                .containsExactlyInAnyOrderEntriesOf(Map.of("1", "inaccessible", "2", "non-optimized"));
            assertThat(saved.listeners.get(1).anaStates).as("B: all optimized, the default, left out").isNull();
            assertKind(() -> engine().setAnaState(nqn, pathA, 0, "optimized"), ControlException.Kind.INVALID);
            assertKind(() -> engine().setAnaState(nqn, new ListenerConfig("tcp", "127.0.0.6", 1), 1, "optimized"),
                ControlException.Kind.NOT_FOUND);
            assertThat(a.io(0).read(2, 10, 8).ok()).as("the connection carries on").isTrue();
        } finally {
            engine().removeSubsystem(nqn);
            engine().removeBdev("ana1");
            engine().removeBdev("ana2");
        }
    }

    /**
     * A namespace moved to another ANA group while a host is connected over TCP: the host gets the ANA change
     * event, reads the ANA log page with the namespace in its new
     * group and its Identify Namespace ANAGRPID, and its I/O carries on; an unknown namespace is not found, a group
     * out of range refused by the validator, and the document keeps the group.
     */
    @Test
    void aNamespaceMovesToAnotherAnaGroupWhileAHostIsConnected() throws Exception {
        try (NvmeController c = target.controller(1)) {
            assertThat(AnaLogs.groups(AnaLogs.read(c.admin(), false))).as("before").containsExactly(
                new int[] {1, AnaLogs.ANAS_OPTIMIZED, 1, 3});
            assertThat(c.admin().setFeatures(FID_ASYNC_EVENT_CONFIG, AnaLogs.AEC_ANA_CHANGE).ok()).isTrue();
            CompletableFuture<Completion> aer = c.admin().asyncEventRequest();
            NamespaceConfig moved = engine().setNamespaceAnaGroup(TestTarget.SUBNQN, 3, 2);
            assertThat(moved.anaGroup).isEqualTo(2);
            assertThat(aer.get(10, TimeUnit.SECONDS).dw0()).as("ANA change AEN").isEqualTo(AnaLogs.AEN_ANA_CHANGE);
            assertThat(AnaLogs.groups(AnaLogs.read(c.admin(), false))).as("after").containsExactly(
                new int[] {1, AnaLogs.ANAS_OPTIMIZED, 1}, new int[] {2, AnaLogs.ANAS_OPTIMIZED, 3});
            assertThat(Le.u32(ok(c.admin().identify(0x00, 3, 0)), 92)).as("ANAGRPID of nsid 3").isEqualTo(2);
            TestData.assertWriteReadBack(c.io(0), 3, 8, 4096, 91);
            assertThat(ConfigDocument.namespace(ConfigDocument.subsystem(engine().configSnapshot(), TestTarget.SUBNQN),
                3).anaGroup).as("in the document").isEqualTo(2);
            assertKind(() -> engine().setNamespaceAnaGroup(TestTarget.SUBNQN, 9, 2), ControlException.Kind.NOT_FOUND);
            assertThatThrownBy(() -> engine().setNamespaceAnaGroup(TestTarget.SUBNQN, 3, 0))
                .isInstanceOf(ConfigException.class)
                .hasMessage("subsystems[0].namespaces[1].anaGroup: an ANA group id must be 1..128, got 0");
            assertKind(() -> engine().setNamespaceAnaGroup("nqn.2024-01.io.nvmf4j:none", 3, 2),
                ControlException.Kind.NOT_FOUND);
        } finally {
            engine().setNamespaceAnaGroup(TestTarget.SUBNQN, 3, 1);
        }
        try (NvmeController c = target.controller(1)) {
            assertThat(AnaLogs.groups(AnaLogs.read(c.admin(), false))).as("back").containsExactly(
                new int[] {1, AnaLogs.ANAS_OPTIMIZED, 1, 3});
        }
    }

    /**
     * A change whose document cannot be written is taken back whole: a directory with a file in it holds the
     * temporary file's name, so the atomic write fails, and a change that removes a namespace and a bdev, adds a
     * bdev and a referral leaves the engine and the document as they were (a host still reads the namespace, the
     * added bdev's name is free in the engine, the removed one is there) and the file as it was.
     */
    @Test
    void aChangeWhoseDocumentCannotBeWrittenIsUndone(@TempDir Path state) throws Exception {
        Path file = state.resolve("config.json");
        engine().persistTo(file, ConfigStore::save);
        try {
            engine().commit(() -> engine().addBdev(new BdevConfig("undo0", "malloc", 512, 2048)));
            String before = ConfigStore.toJson(engine().configSnapshot());
            assertThat(Files.readString(file)).as("written").isEqualTo(before);
            Files.createDirectories(state.resolve(".config.json.tmp").resolve("in-the-way"));
            assertThatThrownBy(() -> engine().commit(() -> {
                engine().removeNamespace(TestTarget.SUBNQN, 3);
                engine().removeBdev("undo0");
                engine().addBdev(new BdevConfig("undo1", "malloc", 512, 2048));
                engine().addReferral(new ReferralConfig("tcp", "192.0.2.7", 4420));
                return null;
            })).isInstanceOf(PersistenceException.class)
                .hasMessageStartingWith("cannot save the configuration to " + file + " (")
                .hasMessageEndingWith("); the change was undone");
            assertThat(ConfigStore.toJson(engine().configSnapshot())).as("the document").isEqualTo(before);
            assertThat(Files.readString(file)).as("the file").isEqualTo(before);
            try (NvmeController c = target.controller(1)) {
                TestData.assertWriteReadBack(c.io(0), 3, 16, 4096, 93);
            }
            engine().persistTo(null, null);
            engine().addBdev(new BdevConfig("undo1", "malloc", 512, 2048)); // the engine has no undo1 (else refused)
            engine().removeBdev("undo1");
        } finally {
            engine().persistTo(null, null);
            engine().removeBdev("undo0"); // the engine has undo0 again (else refused)
        }
    }

    static void assertPathStatus(Completion c, String what) {
        assertThat(c.sct()).as("SCT of the %s: %s", what, c).isEqualTo(AnaLogs.SCT_PATH);
        assertThat(c.sc()).as("SC of the %s: ANA inaccessible", what).isEqualTo(AnaLogs.SC_ANA_INACCESSIBLE);
        assertThat(c.dnr()).as("DNR of the %s: clear, the host retries another path", what).isFalse();
    }

    // ------------------------------------------------------------------ listeners

    @Test
    void listenerAddedAndRemovedWhileConnected() throws Exception {
        ListenerConfig second = new ListenerConfig("tcp", "127.0.0.2", 0);
        engine().addListener(TestTarget.SUBNQN, second);
        int port = target.port(second);
        assertThat(port).as("port picked for port 0").isPositive().isNotEqualTo(target.port());
        try (NvmeController first = target.controller(1);
             NvmeController viaSecond = NvmeController.open("127.0.0.2", port, TestTarget.SUBNQN,
                 TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
            TestData.assertWriteReadBack(viaSecond.io(0), 1, 300, 4096, 41);
            try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
                List<Entry> log = entries(readDiscoveryLog(d.admin()));
                assertThat(log).filteredOn(e -> e.subnqn().equals(TestTarget.SUBNQN)).extracting(Entry::traddr)
                    .as("the subsystem on both listeners").containsExactlyInAnyOrder(TestTarget.ADDRESS, "127.0.0.2");
                assertThat(log).filteredOn(e -> e.subtype() == 3).extracting(Entry::traddr)
                    .as("current discovery subsystem entries").containsExactlyInAnyOrderElementsOf(
                        listsTheDiscoverySubsystemOnEveryListener() ? List.of(TestTarget.ADDRESS, "127.0.0.2")
                            : List.of(TestTarget.ADDRESS));
            }
            assertThat(controller(TestTarget.SUBNQN, viaSecond.cntlid()).address()).as("host address")
                .endsWith(":" + viaSecond.admin().queue().localPort());

            engine().removeListener(TestTarget.SUBNQN, second);
            assertThat(viaSecond.admin().queue().awaitClosed(Duration.ofSeconds(10)))
                .as("host on the removed listener is disconnected").isTrue();
            assertThat(ok(first.io(0).read(1, 300, 8))).as("host on the other listener still reads")
                .isEqualTo(Le.random(4096, 41));
        }
        assertThat(engine().listeners()).doesNotContainKey(second).containsKey(target.listener);
        assertThat(engine().configSnapshot().subsystems.get(0).listeners).containsExactly(target.listener);
        assertThatThrownBy(() -> new Socket("127.0.0.2", port).close()).as("nothing listens on the removed port")
            .isInstanceOf(IOException.class);
    }

    /** A port-0 listener: its state, the discovery log and Connect all use the port it bound, never 0. */
    @Test
    void portZeroListenerIsReportedAndAdvertisedWithItsBoundPort() throws Exception {
        ListenerConfig zero = new ListenerConfig("tcp", "127.0.0.3", 0);
        engine().addListener(TestTarget.SUBNQN, zero);
        try {
            ListenerState st = engine().listenerStates().get(zero);
            assertThat(st.state()).isEqualTo("listening");
            assertThat(st.boundPort()).as("bound port").isPositive().isEqualTo(target.port(zero));
            assertThat(st.cause()).isNull();
            assertThat(engine().configSnapshot().subsystems.get(0).listeners).as("stored as configured: port 0")
                .contains(zero);
            try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
                assertThat(entries(readDiscoveryLog(d.admin()))).filteredOn(e -> e.traddr().equals("127.0.0.3"))
                    .as("advertised with the bound port").isNotEmpty()
                    .allSatisfy(e -> assertThat(e.trsvcid()).isEqualTo(Integer.toString(st.boundPort())));
            }
            try (NvmeController c = NvmeController.open("127.0.0.3", st.boundPort(), TestTarget.SUBNQN,
                TestTarget.HOSTNQN, TestTarget.KATO_MS, 1, TcpHostOptions.DEFAULT)) {
                TestData.assertWriteReadBack(c.io(0), 1, 310, 4096, 43);
            }
        } finally {
            engine().removeListener(TestTarget.SUBNQN, zero);
        }
    }

    /**
     * An rdma listener on a host without an RDMA device is kept configured and reported failed with its cause,
     * is not in the discovery log (no host is sent where nobody answers), and TCP carries on.
     */
    @Test
    void rdmaListenerWithoutADeviceIsFailedAndNotAdvertised() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(SpdkEngine.rdmaDevicePresent() || io.nvmf4j.rdma.Rdma.isAvailable(),
            "this machine has an RDMA device; the e2e guest covers rdma");
        ListenerConfig rdma = new ListenerConfig("rdma", TestTarget.ADDRESS, 4420);
        engine().addListener(TestTarget.SUBNQN, rdma);
        try {
            ListenerState st = engine().listenerStates().get(rdma);
            assertThat(st.state()).isEqualTo("failed");
            assertThat(st.boundPort()).isNull();
            assertThat(st.cause()).startsWith("rdma transport unavailable: ");
            assertThat(engine().listenerStates().get(target.listener).state()).isEqualTo("listening");
            assertThat(engine().listeners()).doesNotContainKey(rdma);
            assertThat(engine().configSnapshot().subsystems.get(0).listeners).contains(rdma);
            try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
                List<Entry> log = entries(readDiscoveryLog(d.admin()));
                assertThat(log).as("no rdma entry").noneMatch(e -> e.trtype() == 1);
                assertThat(log).extracting(Entry::subnqn).contains(TestTarget.SUBNQN);
            }
            try (NvmeController c = target.controller(1)) {
                TestData.assertWriteReadBack(c.io(0), 1, 320, 4096, 44);
            }
        } finally {
            engine().removeListener(TestTarget.SUBNQN, rdma);
        }
        assertThat(engine().listenerStates()).doesNotContainKey(rdma);
    }

    @Test
    void listenerRemovedFromOneSubsystemStaysUpForTheOther() throws Exception {
        try (NvmeController open = target.controller(1);
             NvmeController restricted = target.controller(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN,
                 1)) {
            engine().removeListener(TestTarget.RESTRICTED_NQN, target.listener);
            assertThat(restricted.admin().queue().awaitClosed(Duration.ofSeconds(10)))
                .as("the host of the subsystem that left the listener").isTrue();
            TestData.assertWriteReadBack(open.io(0), 1, 1200, 4096, 101);
            assertThatThrownBy(() -> target.controller(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, 0))
                .as("Connect to a subsystem that no longer listens here").hasMessageContaining("admin Connect");
            try (NvmeController again = target.controller(1)) {
                TestData.assertWriteReadBack(again.io(0), 1, 1201, 4096, 102);
            }
        } finally {
            engine().addListener(TestTarget.RESTRICTED_NQN, target.listener);
        }
        try (NvmeController back = target.controller(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN, 1)) {
            TestData.assertWriteReadBack(back.io(0), 1, 8, 4096, 103);
        }
    }

    // ------------------------------------------------------------------ discovery

    @Test
    void discoveryLogListsListenersAllowedSubsystemsAndReferrals() throws Exception {
        ReferralConfig referral = new ReferralConfig("tcp", "10.9.8.7", 4430);
        engine().addReferral(referral);
        try (NvmeController open = target.discovery(TestTarget.HOSTNQN);
             NvmeController allowed = target.discovery(TestTarget.ALLOWED_HOSTNQN)) {
            List<Entry> forOther = entries(readDiscoveryLog(open.admin()));
            List<Entry> forAllowed = entries(readDiscoveryLog(allowed.admin()));
            // the current discovery subsystem (subtype 3) and the referral both carry the discovery NQN
            List<String> expectOther = List.of(TestTarget.SUBNQN, NvmeHost.DISCOVERY_NQN, NvmeHost.DISCOVERY_NQN);
            List<String> expectAllowed = List.of(TestTarget.SUBNQN, TestTarget.RESTRICTED_NQN,
                NvmeHost.DISCOVERY_NQN, NvmeHost.DISCOVERY_NQN);
            assertThat(forOther).extracting(Entry::subnqn).containsExactlyInAnyOrderElementsOf(expectOther);
            assertThat(forAllowed).extracting(Entry::subnqn).containsExactlyInAnyOrderElementsOf(expectAllowed);
            String port = Integer.toString(target.port());
            for (Entry e : forAllowed) {
                boolean isReferral = e.subtype() == 1;
                assertThat(e.trtype()).as("TRTYPE of %s", e).isEqualTo(3);
                assertThat(e.adrfam()).as("ADRFAM of %s", e).isEqualTo(1);
                assertThat(e.trsvcid()).as("TRSVCID of %s", e).isEqualTo(isReferral ? "4430" : port);
                assertThat(e.traddr()).as("TRADDR of %s", e).isEqualTo(isReferral ? "10.9.8.7" : TestTarget.ADDRESS);
                if (!isReferral) {
                    assertThat(e.subtype()).as("SUBTYPE of %s", e)
                        .isEqualTo(e.subnqn().equals(NvmeHost.DISCOVERY_NQN) ? 3 : 2);
                }
            }
            assertThat(forAllowed).filteredOn(e -> e.subtype() == 1).as("one referral").hasSize(1);
            assertThat(engine().controllers(NvmeHost.DISCOVERY_NQN)).extracting(ControllerInfo::hostnqn)
                .contains(TestTarget.HOSTNQN, TestTarget.ALLOWED_HOSTNQN);
        } finally {
            engine().removeReferral(referral);
        }
        try (NvmeController d = target.discovery(TestTarget.HOSTNQN)) {
            assertThat(entries(readDiscoveryLog(d.admin()))).as("referral removed")
                .noneMatch(e -> e.subtype() == 1);
        }
    }

    // ------------------------------------------------------------------ state and statistics

    @Test
    void statsCountControllersQueuesAndNamespaces() throws Exception {
        try (NvmeController c = target.controller(2)) {
            TestData.assertWriteReadBack(c.io(0), 1, 64, 4096, 51);
            SubsystemStats open = stats(TestTarget.SUBNQN);
            assertThat(open.controllers()).isEqualTo(1);
            assertThat(open.queues()).isEqualTo(3);
            assertThat(open.namespaces()).isEqualTo(2);
            assertThat(stats(TestTarget.RESTRICTED_NQN).namespaces()).isEqualTo(1);
            assertThat(engine().subsystemStats()).extracting(SubsystemStats::nqn).contains(NvmeHost.DISCOVERY_NQN);
            double first = engine().busySeconds();
            TestData.assertWriteReadBack(c.io(1), 1, 128, 65536, 52);
            double second = engine().busySeconds();
            assertThat(first).as("busy seconds after I/O").isPositive();
            assertThat(second).as("busy seconds never decrease").isGreaterThanOrEqualTo(first);
        }
        awaitControllers(TestTarget.SUBNQN, 0);
        assertThat(stats(TestTarget.SUBNQN).queues()).isZero();
    }

    // ------------------------------------------------------------------ refused changes

    @Test
    void duplicatesAndNamesInUseAreConflicts() throws Exception {
        String before = ConfigStore.toJson(engine().configSnapshot());
        SubsystemConfig dup = new SubsystemConfig();
        dup.nqn = TestTarget.SUBNQN;
        assertKind(() -> engine().addSubsystem(dup), ControlException.Kind.CONFLICT);
        assertKind(() -> engine().addBdev(new BdevConfig("m0", "malloc", 512, 8)), ControlException.Kind.CONFLICT);
        assertKind(() -> engine().removeBdev("m0"), ControlException.Kind.CONFLICT);
        assertKind(() -> engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(3, "m1")),
            ControlException.Kind.CONFLICT);
        assertKind(() -> engine().addHost(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN),
            ControlException.Kind.CONFLICT);
        assertKind(() -> engine().addListener(TestTarget.SUBNQN, target.listener), ControlException.Kind.CONFLICT);
        assertThat(ConfigStore.toJson(engine().configSnapshot())).as("document unchanged").isEqualTo(before);
    }

    @Test
    void listenerOnATakenPortIsAConflict() throws Exception {
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName(TestTarget.ADDRESS), 0));
            ListenerConfig l = new ListenerConfig("tcp", TestTarget.ADDRESS, taken.getLocalPort());
            assertKind(() -> engine().addListener(TestTarget.SUBNQN, l), ControlException.Kind.CONFLICT);
            assertKind(() -> engine().probeListener(l), ControlException.Kind.CONFLICT);
            assertThat(engine().listeners()).doesNotContainKey(l);
            assertThat(engine().configSnapshot().subsystems.get(0).listeners).doesNotContain(l);
        }
    }

    @Test
    void subsystemRefusedForItsListenerLeavesNothingBehind() throws Exception {
        engine().addBdev(new BdevConfig("part0", "malloc", 512, 2048));
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = "nqn.2024-01.io.nvmf4j:contract-partial";
        s.allowAnyHost = true;
        s.namespaces.add(new NamespaceConfig(1, "part0"));
        try (ServerSocket taken = new ServerSocket()) {
            taken.bind(new InetSocketAddress(InetAddress.getByName(TestTarget.ADDRESS), 0));
            s.listeners.add(new ListenerConfig("tcp", TestTarget.ADDRESS, taken.getLocalPort()));
            assertKind(() -> engine().addSubsystem(s), ControlException.Kind.CONFLICT);
        }
        assertThat(engine().configSnapshot().subsystems).extracting(x -> x.nqn).doesNotContain(s.nqn);
        assertKind(() -> engine().controllers(s.nqn), ControlException.Kind.NOT_FOUND);
        s.listeners.clear();
        s.listeners.add(target.listener);
        engine().addSubsystem(s);
        try (NvmeController c = target.controller(s.nqn, TestTarget.HOSTNQN, 1)) {
            TestData.assertWriteReadBack(c.io(0), 1, 0, 4096, 121);
        } finally {
            engine().removeSubsystem(s.nqn);
            engine().removeBdev("part0");
        }
    }

    @Test
    void unknownNamesAreNotFound() {
        String nowhere = "nqn.2024-01.io.nvmf4j:nowhere";
        assertKind(() -> engine().removeSubsystem(nowhere), ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().controllers(nowhere), ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().addHost(nowhere, OTHER_HOSTNQN), ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().removeNamespace(TestTarget.SUBNQN, 9), ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().removeHost(TestTarget.RESTRICTED_NQN, OTHER_HOSTNQN),
            ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().removeBdev("nope"), ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().growBdev("nope", 100), ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().removeListener(TestTarget.SUBNQN, new ListenerConfig("tcp", "127.0.0.1", 1)),
            ControlException.Kind.NOT_FOUND);
        assertKind(() -> engine().removeReferral(new ReferralConfig("tcp", "10.1.1.1", 8009)),
            ControlException.Kind.NOT_FOUND);
    }

    @Test
    void fileBdevOnADirectoryIsInvalid(@TempDir Path dir) {
        BdevConfig b = new BdevConfig("dir0", "file", 512, 2048);
        b.path = dir.toString();
        // both engines: the shared validator, before either opens anything
        assertThatThrownBy(() -> engine().addBdev(b)).isInstanceOf(ConfigException.class)
            .hasMessageContaining(".path: " + dir + " is neither a regular file nor a listed block device");
        assertThat(engine().configSnapshot().bdev("dir0")).isNull();
    }

    @Test
    void manyRefusedCallsLeaveTheEngineWorking() throws Exception {
        String before = ConfigStore.toJson(engine().configSnapshot());
        for (int i = 0; i < 100; i++) {
            int n = i;
            assertKind(() -> engine().removeNamespace(TestTarget.SUBNQN, 100 + n), ControlException.Kind.NOT_FOUND);
            assertKind(() -> engine().removeBdev("m1"), ControlException.Kind.CONFLICT);
            assertKind(() -> engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(1, "m3")),
                ControlException.Kind.CONFLICT);
            assertKind(() -> engine().addHost(TestTarget.RESTRICTED_NQN, TestTarget.ALLOWED_HOSTNQN),
                ControlException.Kind.CONFLICT);
        }
        assertThat(ConfigStore.toJson(engine().configSnapshot())).isEqualTo(before);
        engine().addBdev(new BdevConfig("after", "malloc", 512, 2048));
        try (NvmeController c = target.controller(1)) {
            NamespaceConfig n = engine().addNamespace(TestTarget.SUBNQN, new NamespaceConfig(7, "after"));
            TestData.assertWriteReadBack(c.io(0), n.nsid, 5, 4096, 61);
            engine().removeNamespace(TestTarget.SUBNQN, 7);
        } finally {
            engine().removeBdev("after");
        }
        assertThat(ConfigStore.toJson(engine().configSnapshot())).isEqualTo(before);
    }

    // ------------------------------------------------------------------ start-up settings

    /** Stored start-up settings show in the document; the ones in effect stay those the engine started with. */
    @Test
    void startedWithKeepsTheSettingsInEffectWhileStoredOnesWait() {
        TargetConfig before = engine().configSnapshot();
        TargetConfig next = engine().configSnapshot();
        next.tcp.maxQueueDepth = before.tcp.maxQueueDepth == 64 ? 32 : 64;
        next.rdma.maxIoQueues = before.rdma.maxIoQueues == 4 ? 2 : 4;
        try {
            engine().setStartupSettings(next);
            assertThat(engine().configSnapshot().tcp.maxQueueDepth).as("stored").isEqualTo(next.tcp.maxQueueDepth);
            assertThat(engine().configSnapshot().rdma.maxIoQueues).as("stored").isEqualTo(next.rdma.maxIoQueues);
            TargetConfig live = engine().startedWith();
            assertThat(live.tcp.maxQueueDepth).as("in effect").isEqualTo(before.tcp.maxQueueDepth);
            assertThat(live.rdma.maxIoQueues).as("in effect").isEqualTo(before.rdma.maxIoQueues);
            assertThat(live.engine).isEqualTo(engine().name());
            live.tcp.maxQueueDepth = 999;
            assertThat(engine().startedWith().tcp.maxQueueDepth).as("a copy").isEqualTo(before.tcp.maxQueueDepth);
        } finally {
            engine().setStartupSettings(before);
        }
    }

    // ------------------------------------------------------------------ SPDK's own host

    @Test
    void spdkNvmeIdentifySeesSerialModelAndNguid() throws Exception {
        SpdkTools.assumeBuilt();
        SpdkTools.Run r = SpdkTools.identify(SpdkTools.trid(TestTarget.ADDRESS, target.port(), TestTarget.SUBNQN,
            TestTarget.HOSTNQN));
        assertThat(r.exitCode()).as("spdk_nvme_identify's exit status; it printed:\n%s", r.output()).isZero();
        assertThat(r.output()).contains("Serial Number:                         " + TestTarget.SERIAL)
            .contains("Model Number:                          " + TestTarget.MODEL)
            .containsIgnoringCase(TestTarget.NGUID)
            .contains("Subsystem NQN:                         " + TestTarget.SUBNQN);
    }

    @Test
    void bdevperfVerifyCompletesWithoutErrors() throws Exception {
        SpdkTools.assumeBuilt();
        SpdkTools.Run r = SpdkTools.bdevperfVerify(TestTarget.ADDRESS, target.port(), TestTarget.SUBNQN,
            TestTarget.HOSTNQN, 3);
        assertThat(r.exitCode()).as("bdevperf's exit status; it printed:\n%s", r.output()).isZero();
        assertThat(r.output()).as("bdevperf's output").contains("Nvme0n1").doesNotContainIgnoringCase("miscompare");
        List<double[]> totals = TestData.bdevperfTotals(r.output());
        assertThat(totals).as("bdevperf's Total line in:\n%s", r.output()).hasSize(1);
        assertThat(totals.get(0)[0]).as("IOPS in:\n%s", r.output()).isPositive();
        assertThat(totals.get(0)[2]).as("failed/s in:\n%s", r.output()).isZero();
        assertThat(totals.get(0)[3]).as("timed out/s in:\n%s", r.output()).isZero();
    }

    // ------------------------------------------------------------------ helpers

    static byte[] ok(Completion c) {
        assertThat(c.ok()).as("%s", c).isTrue();
        return c.data();
    }

    static void assertKind(ThrowingCallable call, ControlException.Kind kind) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ControlException.class,
            e -> assertThat(e.kind()).as("kind of \"%s\"", e.getMessage()).isEqualTo(kind));
    }

    static ControllerInfo controller(String nqn, int cntlid) {
        return engine().controllers(nqn).stream().filter(i -> i.cntlid() == cntlid).findFirst()
            .orElseThrow(() -> new AssertionError("no controller " + cntlid + " in " + engine().controllers(nqn)));
    }

    static SubsystemStats stats(String nqn) {
        return engine().subsystemStats().stream().filter(s -> s.nqn().equals(nqn)).findFirst()
            .orElseThrow(() -> new AssertionError("no stats for " + nqn));
    }

    /** Waits (up to 10 s) until a subsystem has {@code n} controllers: disconnects finish asynchronously. */
    static void awaitControllers(String nqn, int n) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (engine().controllers(nqn).size() != n && System.nanoTime() < end) {
            Thread.sleep(20);
        }
        assertThat(engine().controllers(nqn)).as("controllers of %s", nqn).hasSize(n);
    }

    /** Enables namespace attribute notices and sends an Asynchronous Event Request; its completion. */
    static CompletableFuture<Completion> armNamespaceEvents(NvmeHost admin) {
        assertThat(admin.setFeatures(FID_ASYNC_EVENT_CONFIG, AEC_NS_ATTRIBUTE).ok()).isTrue();
        return admin.asyncEventRequest();
    }

    static void assertNamespaceChangedEvent(Completion event) {
        assertThat(event.ok()).as("%s", event).isTrue();
        assertThat(event.dw0() & 0x7).as("event type: notice").isEqualTo(2);
        assertThat((event.dw0() >>> 8) & 0xFF).as("event info: namespace attribute changed").isZero();
        assertThat((event.dw0() >>> 16) & 0xFF).as("log page").isEqualTo(LID_CHANGED_NS);
    }

    /** Get Log Page 04h: the changed nsids (reading it clears it). */
    static List<Long> changedNamespaces(NvmeHost admin) {
        byte[] log = ok(admin.getLogPage(LID_CHANGED_NS, -1, 0, 4096));
        return nonZeroU32s(log);
    }

    /** Identify CNS 02h: the active nsids. */
    static List<Long> activeNamespaces(NvmeHost admin) {
        return nonZeroU32s(ok(admin.identify(0x02, 0, 0)));
    }

    private static List<Long> nonZeroU32s(byte[] b) {
        List<Long> out = new ArrayList<>();
        for (int off = 0; off + 4 <= b.length && Le.u32(b, off) != 0; off += 4) {
            out.add(Le.u32(b, off));
        }
        return out;
    }

    /** Namespace identification descriptors (CNS 03h) by NIDT. */
    static Map<Integer, byte[]> descriptors(byte[] d) {
        Map<Integer, byte[]> byType = new HashMap<>();
        for (int off = 0; off + 4 <= d.length && d[off] != 0; off += 4 + Le.u8(d, off + 1)) {
            byType.put(Le.u8(d, off), Le.slice(d, off + 4, Le.u8(d, off + 1)));
        }
        return byType;
    }

    static byte[] uuidBytes(String uuid) {
        UUID u = UUID.fromString(uuid);
        return ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits())
            .array();
    }

    /** One discovery log entry, decoded (TRSVCID and TRADDR with their padding trimmed). */
    record Entry(int trtype, int adrfam, int subtype, int portid, String trsvcid, String subnqn, String traddr) {
        static Entry parse(byte[] log, int index) {
            int o = DISCOVERY_ENTRY + index * DISCOVERY_ENTRY;
            return new Entry(Le.u8(log, o), Le.u8(log, o + 1), Le.u8(log, o + 2), Le.u16(log, o + 4),
                Le.cString(log, o + 32, 32).trim(), Le.cString(log, o + 256, 256), Le.cString(log, o + 512, 256).trim());
        }
    }

    static byte[] readDiscoveryLog(NvmeHost admin) {
        byte[] header = ok(admin.getLogPage(LID_DISCOVERY, 0, 0, 16));
        long numrec = Le.u64(header, 8);
        return ok(admin.getLogPage(LID_DISCOVERY, 0, 0, (int) (DISCOVERY_ENTRY * (numrec + 1))));
    }

    static List<Entry> entries(byte[] log) {
        List<Entry> out = new ArrayList<>();
        for (int i = 0; i < Le.u64(log, 8); i++) {
            out.add(Entry.parse(log, i));
        }
        return out;
    }
}
