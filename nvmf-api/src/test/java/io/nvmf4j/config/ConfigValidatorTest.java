package io.nvmf4j.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/** Every field check of {@link ConfigValidator}: each bad field is reported with its path. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ConfigValidatorTest {

    /** Where {@link #base()}'s file bdev may live (storage.fileDirectories). */
    @TempDir
    static Path images;

    /** The embedded default plus a file bdev, so bdev-level cases have one of each kind to break. */
    private static TargetConfig base() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.storage = StorageConfig.directories(images.toString());
        BdevConfig f = new BdevConfig("file0", "file", 4096, 0);
        f.path = images.resolve("disk0.img").toString();
        c.bdevs.add(f);
        return c;
    }

    private static SubsystemConfig sub(TargetConfig c) {
        return c.subsystems.get(0);
    }

    private static SubsystemConfig secondSubsystem(TargetConfig c, String nqn) {
        SubsystemConfig s = new SubsystemConfig();
        s.nqn = nqn;
        s.listeners.add(new ListenerConfig("tcp", "127.0.0.1", 4420));
        c.subsystems.add(s);
        return s;
    }

    private static ConfigException problemsOf(TargetConfig c) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c));
        assertThat(e).as("validation of a bad document must throw ConfigException").isNotNull();
        return e;
    }

    @Test
    void embeddedDefaultValidates() {
        assertThatCode(() -> ConfigValidator.validate(ConfigStore.defaultConfig())).doesNotThrowAnyException();
        assertThatCode(() -> ConfigValidator.validate(base())).doesNotThrowAnyException();
    }

    @Test
    void fileBdevIoWorkersAndQueueDepthInRangeValidate() {
        TargetConfig c = base();
        c.bdevs.get(1).ioWorkers = 256;
        c.bdevs.get(1).ioQueueDepth = 1;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        c.bdevs.get(1).ioWorkers = 1;
        c.bdevs.get(1).ioQueueDepth = 65536;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @Test
    void fileBdevIoEnginesValidate() {
        TargetConfig c = base();
        for (String engine : BdevConfig.IO_ENGINES) {
            c.bdevs.get(1).ioEngine = engine;
            assertThatCode(() -> ConfigValidator.validate(c)).as(engine).doesNotThrowAnyException();
        }
    }

    @Test
    void embeddedDefaultHasTheDocumentedShape() {
        TargetConfig c = ConfigStore.defaultConfig();
        assertThat(c.subsystems).hasSize(1);
        SubsystemConfig s = sub(c);
        assertThat(s.nqn).isEqualTo("nqn.2026-11.io.nvmf4j:default").isEqualTo(ConfigStore.DEFAULT_NQN);
        assertThat(s.allowAnyHost).isTrue();
        assertThat(s.hosts).isEmpty();
        assertThat(s.namespaces).hasSize(1);
        NamespaceConfig ns = s.namespaces.get(0);
        assertThat(ns.nsid).isEqualTo(1);
        BdevConfig b = c.bdev(ns.bdev);
        assertThat(c.bdevs).containsExactly(b);
        assertThat(b.type).isEqualTo("malloc");
        assertThat((long) b.blockSize * b.numBlocks).as("bytes").isEqualTo(256L << 20);
        assertThat(s.listeners).containsExactly(new ListenerConfig("tcp", "127.0.0.1", 4420));
        assertThat(s.serial).as("identities are assigned later, not embedded").isNull();
        assertThat(ns.nguid).isNull();
        assertThat(ns.uuid).isNull();
    }

    @Test
    void embeddedDefaultIsAFreshCopyEachTime() {
        TargetConfig a = ConfigStore.defaultConfig();
        a.subsystems.get(0).nqn = "nqn.changed";
        a.bdevs.clear();
        TargetConfig b = ConfigStore.defaultConfig();
        assertThat(b.subsystems.get(0).nqn).isEqualTo(ConfigStore.DEFAULT_NQN);
        assertThat(b.bdevs).hasSize(1);
    }

    static Stream<Arguments> badFields() {
        return Stream.of(
            bad("cores 0", c -> c.cores = 0, "cores"),
            bad("cores 257", c -> c.cores = 257, "cores"),
            bad("pollGroupCores naming fewer CPUs than cores", c -> c.pollGroupCores = "[1]", "pollGroupCores",
                "1 CPU(s) for 2 poll group(s)"),
            bad("pollGroupCores not a list", c -> c.pollGroupCores = "2-3", "pollGroupCores", "hex mask"),
            bad("idleStrategy unknown", c -> c.idleStrategy = "spin", "idleStrategy"),
            bad("idleStrategy upper case", c -> c.idleStrategy = "BUSY", "idleStrategy"),
            bad("idleStrategy null", c -> c.idleStrategy = null, "idleStrategy"),
            bad("socketIo unknown", c -> c.socketIo = "iouring", "socketIo", "must be epoll, io_uring, nio, got iouring"),
            bad("socketIo upper case", c -> c.socketIo = "EPOLL", "socketIo"),
            bad("socketIo io_uring on the spdk engine", c -> {
                c.engine = "spdk";
                c.socketIo = "io_uring";
            }, "socketIo", "java engine only"),
            bad("tcp missing", c -> c.tcp = null, "tcp"),
            bad("inCapsuleDataSize not a multiple of 16", c -> c.tcp.inCapsuleDataSize = 8200, "tcp.inCapsuleDataSize"),
            bad("inCapsuleDataSize negative", c -> c.tcp.inCapsuleDataSize = -16, "tcp.inCapsuleDataSize"),
            bad("inCapsuleDataSize too large", c -> c.tcp.inCapsuleDataSize = 131072 + 16, "tcp.inCapsuleDataSize"),
            bad("mdtsBytes not a power of two", c -> c.tcp.mdtsBytes = 3 * 4096, "tcp.mdtsBytes"),
            bad("mdtsBytes below 4096", c -> c.tcp.mdtsBytes = 2048, "tcp.mdtsBytes"),
            bad("mdtsBytes of one page (MDTS 0 is no limit)", c -> c.tcp.mdtsBytes = 4096, "tcp.mdtsBytes",
                "one page cannot be reported"),
            bad("commandQuiesceTimeMs above the 16-bit CQT", c -> c.commandQuiesceTimeMs = 65536,
                "commandQuiesceTimeMs", "65536"),
            bad("commandQuiesceTimeMs below 100", c -> c.commandQuiesceTimeMs = 99, "commandQuiesceTimeMs"),
            bad("commandQuiesceTimeMs on the spdk engine", c -> {
                c.engine = "spdk";
                c.commandQuiesceTimeMs = 30_000;
            }, "commandQuiesceTimeMs", "SPDK's target reports no Command Quiesce Time"),
            bad("maxQueueDepth 8", c -> c.tcp.maxQueueDepth = 8, "tcp.maxQueueDepth"),
            bad("maxIoQueues 0", c -> c.tcp.maxIoQueues = 0, "tcp.maxIoQueues"),
            bad("maxH2cData not a multiple of 4", c -> c.tcp.maxH2cData = 4098, "tcp.maxH2cData"),
            bad("connectTimeoutMs negative", c -> c.tcp.connectTimeoutMs = -1, "tcp.connectTimeoutMs"),
            bad("maxConnectionsPerListener 0", c -> c.tcp.maxConnectionsPerListener = 0, "tcp.maxConnectionsPerListener"),
            bad("maxConnectionsPerHost 0", c -> c.tcp.maxConnectionsPerHost = 0, "tcp.maxConnectionsPerHost"),
            bad("socketBufferBytes 1024", c -> c.tcp.socketBufferBytes = 1024, "tcp.socketBufferBytes"),
            bad("socketBufferBytes negative", c -> c.tcp.socketBufferBytes = -1, "tcp.socketBufferBytes"),
            bad("rdma maxConnectionsPerListener 0", c -> c.rdma.maxConnectionsPerListener = 0,
                "rdma.maxConnectionsPerListener"),
            bad("rdma maxConnectionsPerHost above 1048576", c -> c.rdma.maxConnectionsPerHost = (1 << 20) + 1,
                "rdma.maxConnectionsPerHost"),
            bad("api.requestsPerSecond 0", c -> c.api.requestsPerSecond = 0, "api.requestsPerSecond"),
            bad("api.requestBurst 0", c -> c.api.requestBurst = 0, "api.requestBurst"),
            bad("connectTimeoutMs below 100", c -> c.tcp.connectTimeoutMs = 99, "tcp.connectTimeoutMs"),
            bad("duplicate bdev name", c -> c.bdevs.get(1).name = "malloc0", "bdevs[1].name"),
            bad("blank bdev name", c -> c.bdevs.get(1).name = " ", "bdevs[1].name"),
            bad("unknown bdev type", c -> c.bdevs.get(0).type = "ramdisk", "bdevs[0].type"),
            bad("missing bdev type", c -> c.bdevs.get(0).type = null, "bdevs[0].type"),
            bad("block size 1024", c -> c.bdevs.get(0).blockSize = 1024, "bdevs[0].blockSize"),
            bad("malloc with numBlocks 0", c -> c.bdevs.get(0).numBlocks = 0, "bdevs[0].numBlocks"),
            bad("malloc with a path", c -> c.bdevs.get(0).path = "/x", "bdevs[0].path"),
            bad("file without path", c -> c.bdevs.get(1).path = null, "bdevs[1].path"),
            bad("file with blank path", c -> c.bdevs.get(1).path = "", "bdevs[1].path"),
            bad("file with negative numBlocks", c -> c.bdevs.get(1).numBlocks = -1, "bdevs[1].numBlocks"),
            bad("file with ioWorkers 0", c -> c.bdevs.get(1).ioWorkers = 0, "bdevs[1].ioWorkers", "1..256"),
            bad("file with ioWorkers 257", c -> c.bdevs.get(1).ioWorkers = 257, "bdevs[1].ioWorkers", "257"),
            bad("file with ioQueueDepth 0", c -> c.bdevs.get(1).ioQueueDepth = 0, "bdevs[1].ioQueueDepth", "1..65536"),
            bad("file with ioQueueDepth 65537", c -> c.bdevs.get(1).ioQueueDepth = 65537, "bdevs[1].ioQueueDepth"),
            bad("malloc with ioWorkers", c -> c.bdevs.get(0).ioWorkers = 4, "bdevs[0].ioWorkers"),
            bad("file with ioEngine aio", c -> c.bdevs.get(1).ioEngine = "aio", "bdevs[1].ioEngine",
                "must be one of auto, io_uring, threads, got 'aio'"),
            bad("malloc with ioEngine", c -> c.bdevs.get(0).ioEngine = "threads", "bdevs[0].ioEngine",
                "only file bdevs"),
            bad("malloc with ioQueueDepth", c -> c.bdevs.get(0).ioQueueDepth = 64, "bdevs[0].ioQueueDepth"),
            bad("nqn without nqn. prefix", c -> sub(c).nqn = "iqn.2026-11.io.nvmf4j:x", "subsystems[0].nqn"),
            bad("nqn just the prefix", c -> sub(c).nqn = "nqn.", "subsystems[0].nqn"),
            bad("nqn null", c -> sub(c).nqn = null, "subsystems[0].nqn"),
            bad("nqn over 223 bytes", c -> sub(c).nqn = "nqn.2026-11.io.nvmf4j:" + "x".repeat(202), "subsystems[0].nqn"),
            bad("discovery nqn is reserved", c -> sub(c).nqn = "nqn.2014-08.org.nvmexpress.discovery",
                "subsystems[0].nqn", "reserved"),
            bad("duplicate nqn", c -> secondSubsystem(c, ConfigStore.DEFAULT_NQN), "subsystems[1].nqn", "duplicate"),
            bad("serial over 20 characters", c -> sub(c).serial = "x".repeat(21), "subsystems[0].serial"),
            bad("serial not printable", c -> sub(c).serial = "ab\tc", "subsystems[0].serial"),
            bad("model empty", c -> sub(c).model = "", "subsystems[0].model"),
            bad("maxNamespaces above 65535", c -> sub(c).maxNamespaces = 65536, "subsystems[0].maxNamespaces"),
            bad("minCntlid above maxCntlid", c -> sub(c).minCntlid = 100, c2 -> sub(c2).maxCntlid = 99,
                "subsystems[0].minCntlid/maxCntlid"),
            bad("host not an nqn", c -> sub(c).hosts.add("host1"), "subsystems[0].hosts[0]"),
            bad("nsid 0", c -> sub(c).namespaces.get(0).nsid = 0, "subsystems[0].namespaces[0].nsid"),
            bad("nsid above maxNamespaces", c -> sub(c).namespaces.get(0).nsid = 33, "subsystems[0].namespaces[0].nsid"),
            bad("duplicate nsid", c -> sub(c).namespaces.add(new NamespaceConfig(1, "file0")),
                "subsystems[0].namespaces[1].nsid", "duplicate"),
            bad("namespace on an unknown bdev", c -> sub(c).namespaces.get(0).bdev = "nope",
                "subsystems[0].namespaces[0].bdev", "nope"),
            bad("namespace without bdev", c -> sub(c).namespaces.get(0).bdev = null, "subsystems[0].namespaces[0].bdev"),
            bad("bdev used twice in one subsystem", c -> sub(c).namespaces.add(new NamespaceConfig(2, "malloc0")),
                "subsystems[0].namespaces[1].bdev", "malloc0"),
            bad("bdev used by two subsystems",
                c -> secondSubsystem(c, "nqn.2026-11.io.nvmf4j:other").namespaces.add(new NamespaceConfig(1, "malloc0")),
                "subsystems[1].namespaces[0].bdev", "malloc0"),
            bad("nguid too short", c -> sub(c).namespaces.get(0).nguid = "0123456789abcdef", "subsystems[0].namespaces[0].nguid"),
            bad("nguid not hex", c -> sub(c).namespaces.get(0).nguid = "g".repeat(32), "subsystems[0].namespaces[0].nguid"),
            bad("uuid not a uuid", c -> sub(c).namespaces.get(0).uuid = "not-a-uuid", "subsystems[0].namespaces[0].uuid"),
            bad("eui64 too long", c -> sub(c).namespaces.get(0).eui64 = "00112233445566778", "subsystems[0].namespaces[0].eui64"),
            bad("eui64 not hex", c -> sub(c).namespaces.get(0).eui64 = "00112233445566zz", "subsystems[0].namespaces[0].eui64"),
            bad("listener on an unknown transport", c -> sub(c).listeners.get(0).transport = "fc",
                "subsystems[0].listeners[0].transport", "fc"),
            bad("rdma srqDepth", c -> c.rdma.srqDepth = 1, "rdma.srqDepth", "1"),
            bad("rdma maxParkedCapsules 0", c -> c.rdma.maxParkedCapsules = 0, "rdma.maxParkedCapsules", "0"),
            bad("rdma rnrRetryCount over 7", c -> c.rdma.rnrRetryCount = 8, "rdma.rnrRetryCount", "8"),
            bad("rdma mdts not a power of two", c -> c.rdma.mdtsBytes = 12288, "rdma.mdtsBytes", "12288"),
            bad("rdma mdts of one page", c -> c.rdma.mdtsBytes = 4096, "rdma.mdtsBytes", "4096"),
            bad("listener address localhost", c -> sub(c).listeners.get(0).address = "localhost",
                "subsystems[0].listeners[0].address", "localhost"),
            bad("listener address out of range", c -> sub(c).listeners.get(0).address = "256.1.1.1",
                "subsystems[0].listeners[0].address"),
            bad("listener address missing", c -> sub(c).listeners.get(0).address = null,
                "subsystems[0].listeners[0].address"),
            bad("listener port 70000", c -> sub(c).listeners.get(0).port = 70000, "subsystems[0].listeners[0].port", "70000"),
            bad("listener port negative", c -> sub(c).listeners.get(0).port = -1, "subsystems[0].listeners[0].port"),
            // NQNs by the spec's rules (see NqnTest for the rules themselves)
            bad("legacy subsystem name", c -> sub(c).nqn = "blktests-subsystem-1", "subsystems[0].nqn",
                "allowLegacyNqns"),
            bad("nqn with month 13", c -> sub(c).nqn = "nqn.2026-13.io.nvmf4j:x", "subsystems[0].nqn", "real month"),
            bad("nqn with a bad domain label", c -> sub(c).nqn = "nqn.2026-11.-io.nvmf4j:x", "subsystems[0].nqn",
                "bad label '-io'"),
            bad("host uuid nqn with a bad uuid", c -> sub(c).hosts.add("nqn.2014-08.org.nvmexpress:uuid:h1"),
                "subsystems[0].hosts[0]", "must end in a UUID"),
            bad("host legacy name", c -> sub(c).hosts.add("host1"), "subsystems[0].hosts[0]", "allowLegacyNqns"),
            bad("host nqn with a line break", c -> sub(c).hosts.add("nqn.2026-11.io.nvmf4j:h\nx connected"),
                "subsystems[0].hosts[0]", "must not hold control characters (U+000A at 23)"),
            bad("subsystem nqn with a C1 character", c -> sub(c).nqn = "nqn.2026-11.io.nvmf4j:s\u0085",
                "subsystems[0].nqn", "must not hold control characters (U+0085 at 23)"),
            bad("host is the discovery nqn", c -> sub(c).hosts.add(Nqn.DISCOVERY), "subsystems[0].hosts[0]",
                "not a host NQN"),
            bad("duplicate host", c -> {
                sub(c).hosts.add("nqn.2026-11.io.nvmf4j:h");
                sub(c).hosts.add("nqn.2026-11.io.nvmf4j:h");
            }, "subsystems[0].hosts[1]", "duplicate host"),
            // namespace identifiers: never all zeros, never shared
            bad("nguid all zeros", c -> sub(c).namespaces.get(0).nguid = "0".repeat(32),
                "subsystems[0].namespaces[0].nguid", "all zeros"),
            bad("uuid all zeros", c -> sub(c).namespaces.get(0).uuid = "00000000-0000-0000-0000-000000000000",
                "subsystems[0].namespaces[0].uuid", "all zeros"),
            bad("eui64 all zeros", c -> sub(c).namespaces.get(0).eui64 = "0".repeat(16),
                "subsystems[0].namespaces[0].eui64", "all zeros"),
            bad("uuid loosely written", c -> sub(c).namespaces.get(0).uuid = "1-2-3-4-5",
                "subsystems[0].namespaces[0].uuid", "8-4-4-4-12"),
            bad("nguid shared within a subsystem", c -> {
                sub(c).namespaces.get(0).nguid = "0123456789abcdef0123456789abcdef";
                NamespaceConfig n = new NamespaceConfig(2, "file0");
                n.nguid = "0123456789ABCDEF0123456789ABCDEF";
                sub(c).namespaces.add(n);
            }, "subsystems[0].namespaces[1].nguid", "already used by namespace 1 of " + ConfigStore.DEFAULT_NQN),
            bad("uuid shared across subsystems", c -> {
                sub(c).namespaces.get(0).uuid = "9b2a5f0e-3c41-4e8a-b1d7-5a6c7e8f9012";
                NamespaceConfig n = new NamespaceConfig(1, "file0");
                n.uuid = "9B2A5F0E-3C41-4E8A-B1D7-5A6C7E8F9012";
                secondSubsystem(c, "nqn.2026-11.io.nvmf4j:other").namespaces.add(n);
            }, "subsystems[1].namespaces[0].uuid", "already used by namespace 1 of " + ConfigStore.DEFAULT_NQN),
            bad("eui64 shared", c -> {
                sub(c).namespaces.get(0).eui64 = "0011223344556677";
                NamespaceConfig n = new NamespaceConfig(2, "file0");
                n.eui64 = "0011223344556677";
                sub(c).namespaces.add(n);
            }, "subsystems[0].namespaces[1].eui64", "already used"),
            // bdev names and sizes
            bad("bdev name with a slash", c -> c.bdevs.get(1).name = "a/b", "bdevs[1].name", "'a/b'"),
            bad("bdev name with a space", c -> c.bdevs.get(1).name = "a b", "bdevs[1].name"),
            bad("bdev name starting with a dot", c -> c.bdevs.get(1).name = ".hidden", "bdevs[1].name"),
            bad("bdev name starting with a dash", c -> c.bdevs.get(1).name = "-rf", "bdevs[1].name"),
            bad("bdev name of 64 characters", c -> c.bdevs.get(1).name = "b".repeat(64), "bdevs[1].name"),
            bad("bdev name not ASCII", c -> c.bdevs.get(1).name = "disque-é", "bdevs[1].name"),
            bad("null bdev of 2^63-1 blocks", c -> {
                c.bdevs.get(0).type = "null";
                c.bdevs.get(0).numBlocks = Long.MAX_VALUE;
                c.bdevs.get(0).blockSize = 4096;
            }, "bdevs[0].numBlocks", "exceed the largest bdev"),
            bad("malloc just over 1 PiB", c -> c.bdevs.get(0).numBlocks = (1L << 50) / 512 + 1, "bdevs[0].numBlocks",
                "1 PiB"),
            bad("file bdev over 1 PiB", c -> c.bdevs.get(1).numBlocks = (1L << 50) / 4096 + 1, "bdevs[1].numBlocks"),
            // addresses compared in canonical form
            bad("listener address with leading zeros", c -> sub(c).listeners.get(0).address = "127.000.000.001",
                "subsystems[0].listeners[0].address", "leading zeros"),
            bad("listener address IPv4-mapped", c -> sub(c).listeners.get(0).address = "::ffff:127.0.0.1",
                "subsystems[0].listeners[0].address", "as 127.0.0.1"),
            bad("duplicate listener", c -> sub(c).listeners.add(new ListenerConfig("tcp", "127.0.0.1", 4420)),
                "subsystems[0].listeners[1]", "duplicate listener tcp:127.0.0.1:4420"),
            bad("duplicate listener in another spelling", c -> {
                sub(c).listeners.get(0).address = "::1";
                sub(c).listeners.add(new ListenerConfig("tcp", "0:0:0:0:0:0:0:1", 4420));
            }, "subsystems[0].listeners[1]", "duplicate listener tcp:[::1]:4420"),
            bad("secureChannel unknown", c -> sub(c).listeners.get(0).secureChannel = "yes",
                "subsystems[0].listeners[0].secureChannel", "none, optional or required"),
            bad("secureChannel on rdma", c -> {
                sub(c).listeners.get(0).transport = "rdma";
                sub(c).listeners.get(0).secureChannel = "required";
            }, "subsystems[0].listeners[0].secureChannel", "tcp listeners only"),
            bad("secureChannel disagreeing on one listener", c -> {
                sub(c).listeners.get(0).secureChannel = "optional";
                ListenerConfig l = sub(c).listeners.get(0);
                secondSubsystem(c, "nqn.2024-01.io.nvmf4j:second").listeners.set(0,
                    new ListenerConfig(l.transport, l.address, l.port));
            }, "subsystems[1].listeners[0].secureChannel", "none but subsystems[0] has optional"),
            bad("secureChannel optional on the spdk engine", c -> {
                c.engine = "spdk";
                sub(c).listeners.get(0).secureChannel = "optional";
            }, "subsystems[0].listeners[0].secureChannel", "optional (TLS or plain on one port) is java engine only"),
            bad("a TLS PSK on the spdk engine without a derivation", c -> {
                c.engine = "spdk";
                sub(c).allowAnyHost = true;
                sub(c).listeners.get(0).secureChannel = "required"; // a PSK host needs a TLS listener
                HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null);
                k.tlsKey = tlsKeyFile();
                sub(c).hostKeys.add(k);
            }, "subsystems[0].hostKeys[0].tlsKeyDerivation", "set \"rfc8446\" (got none, meaning libnvme)"),
            bad("a TLS PSK on the spdk engine derived as libnvme", c -> {
                c.engine = "spdk";
                sub(c).allowAnyHost = true;
                sub(c).listeners.get(0).secureChannel = "required"; // a PSK host needs a TLS listener
                HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null);
                k.tlsKey = tlsKeyFile();
                k.tlsKeyDerivation = "libnvme";
                sub(c).hostKeys.add(k);
            }, "subsystems[0].hostKeys[0].tlsKeyDerivation", "RFC 8446"),
            bad("hostKeys entry with no key", c -> {
                sub(c).allowAnyHost = true;
                sub(c).hostKeys.add(new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null));
            }, "subsystems[0].hostKeys[0]", "dhchapKey or tlsKey"),
            bad("tlsKey file missing", c -> {
                sub(c).allowAnyHost = true;
                sub(c).listeners.get(0).secureChannel = "required"; // a PSK host needs a TLS listener
                HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null);
                k.tlsKey = images.resolve("no-such.psk").toString();
                sub(c).hostKeys.add(k);
            }, "subsystems[0].hostKeys[0].tlsKey", "does not exist"),
            bad("tlsKeyDerivation unknown", c -> {
                sub(c).allowAnyHost = true;
                sub(c).listeners.get(0).secureChannel = "required"; // a PSK host needs a TLS listener
                HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null);
                k.tlsKey = tlsKeyFile();
                k.tlsKeyDerivation = "openssl";
                sub(c).hostKeys.add(k);
            }, "subsystems[0].hostKeys[0].tlsKeyDerivation", "libnvme or rfc8446"),
            bad("a TLS PSK host on a subsystem with plain listeners only", c -> {
                sub(c).allowAnyHost = true;
                sub(c).listeners.add(new ListenerConfig("rdma", "127.0.0.1", 4420));
                HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null);
                k.tlsKey = tlsKeyFile();
                sub(c).hostKeys.add(k);
            }, "subsystems[0].hostKeys[0].tlsKey", "host nqn.2014-08.org.nvmexpress:uuid:1 has a TLS PSK",
                "must connect over TLS", "every listener of this subsystem is plain"),
            bad("authTimeoutMs below its range", c -> c.authTimeoutMs = 999, "authTimeoutMs", "must be 1000..600000"),
            bad("authTimeoutMs above its range", c -> c.authTimeoutMs = 600_001, "authTimeoutMs", "got 600001"),
            bad("authTimeoutMs on the spdk engine", c -> {
                c.engine = "spdk";
                c.authTimeoutMs = 5000;
            }, "authTimeoutMs", "java engine only"),
            bad("dhchapHashes naming an unknown hash", c -> dhchapHost(c).dhchapHashes = List.of("sha256", "md5"),
                "subsystems[0].hostKeys[0].dhchapHashes", "must be of sha256, sha384, sha512, got md5"),
            bad("dhchapDhGroups empty", c -> dhchapHost(c).dhchapDhGroups = List.of(),
                "subsystems[0].hostKeys[0].dhchapDhGroups", "at least one of null, ffdhe2048"),
            bad("dhchapDhGroups naming an unknown group", c -> dhchapHost(c).dhchapDhGroups = List.of("modp2048"),
                "subsystems[0].hostKeys[0].dhchapDhGroups", "got modp2048"),
            bad("dhchapDhGroups without dhchapKey", c -> {
                sub(c).allowAnyHost = true;
                sub(c).listeners.get(0).secureChannel = "required";
                HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null);
                k.tlsKey = tlsKeyFile();
                k.dhchapDhGroups = List.of("ffdhe2048");
                sub(c).hostKeys.add(k);
            }, "subsystems[0].hostKeys[0].dhchapDhGroups", "needs dhchapKey too"),
            bad("dhchapHashes on the spdk engine", c -> {
                c.engine = "spdk";
                dhchapHost(c).dhchapHashes = List.of("sha512");
            }, "subsystems[0].hostKeys[0].dhchapHashes", "java engine only"),
            bad("discovery hostKeys null", c -> discovery(c).hostKeys = null, "discovery.hostKeys", "must be a list"),
            bad("discovery key without tlsKey", c -> discovery(c).hostKeys.add(new HostKeyConfig(
                H1, null, null)), "discovery.hostKeys[0]", "needs host and tlsKey"),
            bad("discovery key with a DH-HMAC-CHAP key", c -> discoveryKey(c, H1)
                .dhchapKey = "/nonexistent/host.key", "discovery.hostKeys[0]", "DH-HMAC-CHAP", "tlsKey only"),
            bad("discovery key for the discovery NQN", c -> discoveryKey(c, Nqn.DISCOVERY),
                "discovery.hostKeys[0].host", "not a host NQN"),
            bad("discovery key for a malformed host NQN", c -> discoveryKey(c, "host1"),
                "discovery.hostKeys[0].host", "allowLegacyNqns"),
            bad("discovery key twice for one host", c -> {
                discoveryKey(c, H1);
                discoveryKey(c, H1);
            }, "discovery.hostKeys[1]", "duplicate host"),
            bad("discovery tlsKey file missing", c -> discoveryKey(c, H1).tlsKey =
                images.resolve("no-such.psk").toString(), "discovery.hostKeys[0].tlsKey", "does not exist"),
            bad("discovery tlsKeyDerivation unknown", c -> discoveryKey(c, H1)
                .tlsKeyDerivation = "openssl", "discovery.hostKeys[0].tlsKeyDerivation", "libnvme or rfc8446"),
            bad("a discovery TLS PSK on the spdk engine", c -> {
                c.engine = "spdk";
                discoveryKey(c, H1);
            }, "discovery.hostKeys", "not supported by the spdk engine"),
            bad("duplicate referral in another spelling", c -> {
                c.referrals.add(new ReferralConfig("tcp", "2001:db8::1", 8009));
                c.referrals.add(new ReferralConfig("tcp", "2001:DB8:0:0:0:0:0:1", 8009));
            }, "referrals[1]", "duplicate referral"));
    }

    /** A host entry with a DH-HMAC-CHAP key (allowAnyHost on), for the policy fields. */
    private static HostKeyConfig dhchapHost(TargetConfig c) {
        sub(c).allowAnyHost = true;
        HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1",
            keyFile("host.key", io.nvmf4j.auth.DhchapKey.format(1, new byte[32]) + "\n"), null);
        sub(c).hostKeys.add(k);
        return k;
    }

    @Test
    void dhchapPoliciesValidate() {
        TargetConfig c = base();
        HostKeyConfig k = dhchapHost(c);
        k.dhchapHashes = List.of("sha384", "sha512");
        k.dhchapDhGroups = List.of("null", "ffdhe8192");
        c.authTimeoutMs = 1000;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThat(ConfigStore.toJson(c)).contains("\"dhchapHashes\" : [ \"sha384\", \"sha512\" ]");
        assertThat(ConfigStore.toJson(base())).as("absent: not written").doesNotContain("dhchapHashes");
    }

    /** Host NQNs of the discovery keys (valid: a UUID after the prefix). */
    private static final String H1 = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000d1";
    private static final String H2 = "nqn.2014-08.org.nvmexpress:uuid:00000000-0000-0000-0000-0000000000d2";

    private static DiscoveryConfig discovery(TargetConfig c) {
        if (c.discovery == null) {
            c.discovery = new DiscoveryConfig();
        }
        return c.discovery;
    }

    /** A discovery key entry for {@code host} with a valid TLS PSK file. */
    private static HostKeyConfig discoveryKey(TargetConfig c, String host) {
        HostKeyConfig k = new HostKeyConfig(host, null, null);
        k.tlsKey = tlsKeyFile();
        discovery(c).hostKeys.add(k);
        return k;
    }

    @Test
    void discoveryTlsPsksAreValid() {
        TargetConfig c = base();
        discoveryKey(c, H1);
        discoveryKey(c, H2).tlsKeyDerivation = "rfc8446";
        ConfigValidator.validate(c);
        c.discovery.hostKeys.clear();
        ConfigValidator.validate(c);
    }

    /**
     * A host with a TLS PSK is refused at a Connect without TLS, so its subsystem needs a listener that takes TLS:
     * one {@code optional} or {@code required} tcp listener among plain ones will do (the plain ones refuse that
     * host at Connect), and so does no listener yet.
     */
    @Test
    void aTlsPskHostNeedsOneListenerThatTakesTls() {
        TargetConfig c = base();
        sub(c).allowAnyHost = true;
        HostKeyConfig k = new HostKeyConfig("nqn.2014-08.org.nvmexpress:uuid:1", null, null);
        k.tlsKey = tlsKeyFile();
        sub(c).hostKeys.add(k);
        ListenerConfig optional = new ListenerConfig("tcp", "127.0.0.1", 4421);
        optional.secureChannel = ListenerConfig.SECURE_OPTIONAL;
        sub(c).listeners.add(optional);
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        sub(c).listeners.clear();
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    /** A valid TLS PSK file (mode 0600) in {@link #images}. */
    private static String tlsKeyFile() {
        return keyFile("host.psk", io.nvmf4j.auth.TlsPsk.format(1, new byte[32]));
    }

    /** A key file of mode 0600 in {@link #images} holding {@code text}, written once. */
    private static String keyFile(String name, String text) {
        try {
            Path f = images.resolve(name);
            if (!java.nio.file.Files.exists(f)) {
                java.nio.file.Files.createFile(f, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
                    java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
                java.nio.file.Files.writeString(f, text);
            }
            return f.toString();
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Test
    void theSpdkEngineTakesHostKeysAndRequiredTls() {
        TargetConfig c = base();
        c.engine = "spdk";
        c.bdevs.remove(1); // the file bdev: not what this is about
        sub(c).allowAnyHost = false;
        String host = "nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-000000000001";
        sub(c).hosts.add(host);
        HostKeyConfig k = new HostKeyConfig(host,
            keyFile("host.key", io.nvmf4j.auth.DhchapKey.format(1, new byte[32]) + "\n"),
            keyFile("ctrl.key", io.nvmf4j.auth.DhchapKey.format(3, new byte[64]) + "\n"));
        k.tlsKey = tlsKeyFile();
        k.tlsKeyDerivation = "rfc8446";
        sub(c).hostKeys.add(k);
        sub(c).listeners.get(0).secureChannel = "required";
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    private static Arguments bad(String name, Consumer<TargetConfig> breakIt, String path, String... mentions) {
        return Arguments.of(name, breakIt, path, mentions);
    }

    private static Arguments bad(String name, Consumer<TargetConfig> first, Consumer<TargetConfig> second, String path) {
        return Arguments.of(name, first.andThen(second), path, new String[0]);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badFields")
    void aBadFieldIsReportedWithItsPath(String name, Consumer<TargetConfig> breakIt, String path, String[] mentions) {
        TargetConfig c = base();
        breakIt.accept(c);
        ConfigException e = problemsOf(c);
        assertThat(e.problems()).as("exactly one problem for: %s", name).hasSize(1);
        assertThat(e.problems().get(0)).startsWith(path + ":");
        assertThat(e.getMessage()).contains(path + ":");
        for (String m : mentions) {
            assertThat(e.getMessage()).contains(m);
        }
    }

    @Test
    void legacyNamesAreAcceptedWithTheOptIn() {
        TargetConfig c = base();
        sub(c).nqn = "blktests-subsystem-1";
        sub(c).hosts.add("blktests-host");
        c.allowLegacyNqns = true;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThat(ConfigStore.toJson(c)).contains("\"allowLegacyNqns\" : true");
        assertThat(ConfigStore.toJson(base())).as("off: not written").doesNotContain("allowLegacyNqns");
        sub(c).nqn = Nqn.DISCOVERY;
        assertThat(problemsOf(c).problems()).singleElement().asString()
            .isEqualTo("subsystems[0].nqn: the discovery NQN is reserved");
    }

    @Test
    void theLargestBdevIsAccepted() {
        TargetConfig c = base();
        c.bdevs.get(0).type = "null";
        c.bdevs.get(0).numBlocks = ConfigValidator.MAX_BDEV_BYTES / 512;
        c.bdevs.get(1).numBlocks = ConfigValidator.MAX_BDEV_BYTES / 4096;
        c.bdevs.get(1).name = "_file-0.img";
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"busy", "backoff", "interrupt"})
    void everyIdleStrategyIsAccepted(String strategy) {
        TargetConfig c = base();
        c.idleStrategy = strategy;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"epoll", "io_uring", "nio"})
    void everySocketIoIsAccepted(String socketIo) {
        TargetConfig c = base();
        c.socketIo = socketIo;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
        assertThat(c.socketIoOrDefault()).isEqualTo(socketIo);
    }

    @Test
    void socketIoIsEpollWhereAbsentAndNotWritten() {
        TargetConfig c = base();
        assertThat(c.socketIoOrDefault()).isEqualTo("epoll");
        assertThat(ConfigStore.toJson(c)).doesNotContain("socketIo");
        c.engine = "spdk";
        c.socketIo = "epoll";
        assertThatCode(() -> ConfigValidator.validate(c)).as("the default named on the spdk engine")
            .doesNotThrowAnyException();
    }

    @ParameterizedTest
    @ValueSource(strings = {"127.0.0.1", "0.0.0.0", "10.1.2.3", "::1", "::", "fe80::1", "2001:db8::42"})
    void ipLiteralsAreAcceptedAsListenerAddresses(String address) {
        TargetConfig c = base();
        sub(c).listeners.get(0).address = address;
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @Test
    void boundaryValuesAreAccepted() {
        TargetConfig c = base();
        c.cores = 1;
        c.tcp.inCapsuleDataSize = 0;
        c.tcp.mdtsBytes = 8 << 20;
        c.tcp.connectTimeoutMs = 0;  // no limit
        sub(c).listeners.get(0).port = 0;  // ephemeral
        sub(c).namespaces.get(0).nsid = sub(c).maxNamespaces;
        sub(c).namespaces.get(0).eui64 = "0011223344556677";
        sub(c).namespaces.get(0).nguid = "0123456789ABCDEF0123456789abcdef";
        sub(c).namespaces.get(0).uuid = "9b2a5f0e-3c41-4e8a-b1d7-5a6c7e8f9012";
        sub(c).serial = "x".repeat(20);
        sub(c).hosts.add("nqn.2014-08.org.nvmexpress:uuid:3f1b4a52-8c1e-4d0a-9a57-000000000001");
        sub(c).nqn = "nqn.2026-11.io.nvmf4j:" + "x".repeat(201);  // 223 bytes
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @Test
    void fileBdevWithoutNumBlocksIsAccepted() {
        TargetConfig c = base();
        assertThat(c.bdev("file0").numBlocks).isZero();
        sub(c).namespaces.add(new NamespaceConfig(2, "file0"));
        assertThatCode(() -> ConfigValidator.validate(c)).doesNotThrowAnyException();
    }

    @Test
    void everyProblemIsReportedAtOnce() {
        TargetConfig c = base();
        c.cores = 0;
        c.idleStrategy = "spin";
        c.tcp.inCapsuleDataSize = 8200;
        c.bdevs.get(1).path = null;
        sub(c).nqn = "bad";
        sub(c).namespaces.get(0).nguid = "xyz";
        sub(c).listeners.get(0).port = 70000;
        sub(c).listeners.get(0).address = "localhost";
        ConfigException e = problemsOf(c);
        List<String> paths = e.problems().stream().map(p -> p.substring(0, p.indexOf(':'))).toList();
        assertThat(paths).containsExactlyInAnyOrder("cores", "idleStrategy", "tcp.inCapsuleDataSize", "bdevs[1].path",
            "subsystems[0].nqn", "subsystems[0].namespaces[0].nguid", "subsystems[0].listeners[0].port",
            "subsystems[0].listeners[0].address");
        for (String p : e.problems()) {
            assertThat(e.getMessage()).contains(p);
        }
    }

    @Test
    void shortDottedAddressIsRejected() {
        TargetConfig c = base();
        sub(c).listeners.get(0).address = "1.2.3";
        ConfigException e = problemsOf(c);
        assertThat(e.problems()).singleElement().asString().startsWith("subsystems[0].listeners[0].address:");
    }

    @Test
    void bdevWithoutNameIsReportedNotThrown() {
        TargetConfig c = base();
        c.bdevs.get(0).name = null;
        ConfigException e = problemsOf(c);
        assertThat(e.getMessage()).contains("bdevs[0].name");
    }

    @Test
    void nullListsAreReportedNotThrown() {
        for (String json : List.of("{\"bdevs\": null}", "{\"bdevs\": [null]}", "{\"subsystems\": null}",
            "{\"subsystems\": [{\"nqn\": \"nqn.a\", \"namespaces\": null}]}")) {
            TargetConfig c = ConfigStore.parse(json);
            assertThat(catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c)))
                .as("validating %s", json).isNotNull();
        }
    }
}
