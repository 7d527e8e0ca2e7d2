package io.nvmf4j.config;

import io.nvmf4j.nvme.AnaState;

import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What an engine a document may name in {@code "engine"} can do, declared once: the validator checks a document
 * against the capabilities of the engine it names, and the control layer refuses a call that needs one the engine
 * lacks, both with the engine's own reason ({@link #refusal}). The engines are registered here, in order: {@link #JAVA}
 * (our own data path, which has every capability) and {@link #SPDK} (SPDK's target, in spdk-jni); a document naming
 * another is refused.
 *
 * @param name             the configuration name ({@code java}, {@code spdk})
 * @param bdevTypes        the bdev {@code type}s it can open ({@code error} bdevs carry its error injection)
 * @param transports       the listener and referral {@code transport}s, in the order messages name them
 * @param secureChannels   the listener {@code secureChannel}s
 * @param anaStates        the ANA states a listener's group may be in
 * @param reservationModes a namespace's {@code reservations} values it keeps (a single one is also the default)
 * @param poolKinds        the pool {@code kind}s it keeps volumes in ({@link PoolConfig})
 * @param features         what else it has
 * @param refusals         why it lacks what it lacks, by {@link Feature} name or {@code bdev.<type>},
 *                         {@code secureChannel.<name>}, {@code anaState}, {@code reservations} (a format),
 *                         {@code pool.<kind>}
 */
public record EngineCapabilities(String name, Set<String> bdevTypes, List<String> transports,
                                 Set<String> secureChannels, Set<AnaState> anaStates, Set<String> reservationModes,
                                 Set<String> poolKinds, Set<Feature> features, Map<String, String> refusals) {
    /** Capabilities beyond the sets above. */
    public enum Feature {
        /** {@code authTimeoutMs} other than its default. */
        AUTH_TIMEOUT,
        /** A host's own {@code dhchapHashes} and {@code dhchapDhGroups}. */
        HOST_AUTH_POLICY,
        /** TLS PSKs derived as libnvme up to 1.15 does (without it: {@code rfc8446} only). */
        LIBNVME_TLS_DERIVATION,
        /** TLS PSKs for the discovery subsystem ({@code discovery.hostKeys}). */
        DISCOVERY_HOST_KEYS,
        /** A namespace's persistent reservation shown through the API. */
        RESERVATION_REPORT,
        /** ANA group ids above the subsystem's {@code maxNamespaces}. */
        ANA_GROUPS_ABOVE_MAX_NAMESPACES,
        /** An ANA log page sized by the transport's MDTS (NANAGRPID = the groups that fit next to the NSIDs). */
        ANA_LOG_WITHIN_MDTS,
        /** Identify's Command Quiesce Time, and a lost controller's device commands bounded by it. */
        COMMAND_QUIESCE_TIME,
        /** A choice of the poll groups' event loops ({@code socketIo}). */
        SOCKET_IO,
        /**
         * I/O counts, bytes and latency per host and per controller, in the REST views and the metrics (the engine
         * reports each I/O with its controller and queue).
         */
        IO_PER_HOST,
        /** The list of the slowest recent I/Os, each with its namespace, host, controller and command. */
        IO_SLOWEST,
        /** QoS limits on a namespace ({@link QosLimits}). */
        QOS_NAMESPACE,
        /** QoS limits per host, on a namespace or a subsystem. */
        QOS_PER_HOST,
        /** QoS groups of namespaces ({@code qosGroups}). */
        QOS_GROUPS,
        /** A QoS IOPS limit of any value (without it: multiples of {@link QosLimits#SPDK_IOPS_STEP}). */
        QOS_IOPS_ANY,
        /**
         * Poll groups placed by the document: one per CPU of {@code pollGroupCores}, each with its RDMA buffers in 2
         * MiB hugepages of its own (without it the engine places its threads and its memory itself: SPDK's reactors
         * on {@code spdk.coreMask}, its memory {@code spdk.memSizeMb}, in hugepages unless {@code spdk.hugepages} is
         * false). What a machine profile sizes and pins follows it.
         */
        POLL_GROUP_PLACEMENT
    }

    /** The java engine: our own data path. */
    public static final EngineCapabilities JAVA = new EngineCapabilities("java",
        Set.of("malloc", "null", "file", "error", "rbd"), List.of("tcp", "rdma"),
        Set.of(ListenerConfig.SECURE_NONE, ListenerConfig.SECURE_OPTIONAL, ListenerConfig.SECURE_REQUIRED),
        EnumSet.allOf(AnaState.class), Set.copyOf(NamespaceConfig.RESERVATIONS),
        Set.of(PoolConfig.KIND_REFLINK_DIR, PoolConfig.KIND_RBD), EnumSet.allOf(Feature.class),
        Map.of("pool." + PoolConfig.KIND_LVOL, "lvol pools (SPDK's lvol store) are spdk engine only; the java engine's"
            + " pools are reflink-dir or rbd: use one of those kinds or engine spdk"));

    /** The spdk engine: SPDK's NVMe-oF target inside the JVM (spdk-jni), as spdk-jni/spdk-build.sh builds it. */
    public static final EngineCapabilities SPDK = new EngineCapabilities("spdk",
        Set.of("malloc", "null", "file"), List.of("tcp", "rdma"),
        Set.of(ListenerConfig.SECURE_NONE, ListenerConfig.SECURE_REQUIRED),
        EnumSet.of(AnaState.OPTIMIZED, AnaState.NON_OPTIMIZED, AnaState.INACCESSIBLE),
        Set.of(NamespaceConfig.RESERVATIONS_LOCAL), Set.of(PoolConfig.KIND_LVOL), EnumSet.of(Feature.QOS_NAMESPACE),
        Map.ofEntries(
            Map.entry("pool." + PoolConfig.KIND_REFLINK_DIR, "reflink-dir pools are java engine only; the spdk engine's"
                + " pools are SPDK lvol stores: use kind lvol or engine java"),
            Map.entry("pool." + PoolConfig.KIND_RBD, "rbd pools are java engine only (spdk-jni's SPDK is built"
                + " without its rbd module); the spdk engine's pools are SPDK lvol stores: use kind lvol or engine"
                + " java"),
            Map.entry(Feature.QOS_PER_HOST.name(), "QoS per host is java engine only: SPDK's bdev QoS limits a"
                + " bdev's I/O whichever host sends it; use engine java"),
            Map.entry(Feature.QOS_GROUPS.name(), "QoS groups are java engine only: SPDK's bdev QoS limits each bdev"
                + " on its own (no shared budget across bdevs); use engine java"),
            Map.entry(Feature.QOS_IOPS_ANY.name(), "the spdk engine (SPDK's bdev QoS) takes IOPS in multiples of "
                + QosLimits.SPDK_IOPS_STEP + ", got %d"),
            Map.entry(Feature.AUTH_TIMEOUT.name(),
                "java engine only (SPDK's target keeps its own authentication timeout)"),
            Map.entry(Feature.IO_PER_HOST.name(), "I/O per host and per controller is java engine only: SPDK's"
                + " NVMe-oF target keeps no I/O counts, bytes or latency per controller or host (it counts I/O per bdev,"
                + " the per-namespace meters and GET .../namespaces/{nsid}/latency, and completed I/O per poll group);"
                + " use engine java"),
            Map.entry(Feature.IO_SLOWEST.name(), "the slowest recent I/Os are java engine only: SPDK's target reports"
                + " no single I/O (its bdev latency histograms count times without their command, namespace or host);"
                + " use engine java"),
            Map.entry(Feature.COMMAND_QUIESCE_TIME.name(),
                "java engine only (SPDK's target reports no Command Quiesce Time)"),
            Map.entry(Feature.POLL_GROUP_PLACEMENT.name(), "java engine only: SPDK's reactors run on spdk.coreMask"
                + " and its memory is spdk.memSizeMb"),
            Map.entry(Feature.SOCKET_IO.name(), "java engine only (SPDK's target runs its sockets on its own reactors"
                + " and sock module); leave it out or use engine java"),
            Map.entry(Feature.HOST_AUTH_POLICY.name(),
                "java engine only (SPDK's target takes its hashes and DH groups for every host)"),
            Map.entry(Feature.LIBNVME_TLS_DERIVATION.name(), "the spdk engine (SPDK's target) derives TLS PSKs as RFC"
                + " 8446 does (SPDK's host, nvme-cli 2.16 / libnvme 1.16 and later); set \"rfc8446\" (got %s), or use"
                + " engine java for hosts that derive as libnvme up to 1.15 (nvme-cli 2.13 of Debian 13)"),
            Map.entry(Feature.DISCOVERY_HOST_KEYS.name(),
                "TLS PSKs for the discovery subsystem are not supported by the spdk engine yet; use engine java"),
            Map.entry(Feature.RESERVATION_REPORT.name(),
                "engine spdk does not show reservations through the API (hosts read them with Reservation Report)"),
            Map.entry(Feature.ANA_GROUPS_ABOVE_MAX_NAMESPACES.name(),
                "the spdk engine numbers ANA groups 1..maxNamespaces (%d), got %d"),
            Map.entry("bdev.rbd", "rbd bdevs are java engine only (the spdk engine's SPDK is built without"
                + " --with-rbd, so SPDK's rbd bdev module is not there); use engine java"),
            Map.entry("bdev.error", "error bdevs are java engine only (fault injection is not wired to SPDK's error"
                + " bdev module); use engine java or another bdev type"),
            Map.entry("secureChannel.optional", "optional (TLS or plain on one port) is java engine only: SPDK's"
                + " target listens with its ssl socket (TLS only) or its posix one (plain only); use required or none,"
                + " or engine java"),
            Map.entry("anaState", "%s is java engine only (SPDK's listeners are optimized, non-optimized or"
                + " inaccessible)"),
            Map.entry("reservations",
                "the spdk engine keeps SPDK's own reservation in each instance: local only, got %s")));

    private static final List<EngineCapabilities> REGISTERED = List.of(JAVA, SPDK);

    /** The registered engine named {@code name}, or null. */
    public static EngineCapabilities of(String name) {
        for (EngineCapabilities e : REGISTERED) {
            if (e.name.equals(name)) {
                return e;
            }
        }
        return null;
    }

    /**
     * The capabilities a document is checked against: those of the engine it names; for a name that is not an
     * engine (reported on its own) the java engine's, which has every capability, so nothing else is reported for it.
     */
    public static EngineCapabilities forDocument(TargetConfig c) {
        EngineCapabilities e = of(c.engine);
        return e != null ? e : JAVA;
    }

    /** The registered engine names, in order. */
    public static List<String> names() {
        List<String> out = new ArrayList<>();
        REGISTERED.forEach(e -> out.add(e.name));
        return out;
    }

    /** The transports any registered engine has, in order: what a document's {@code transport} may name. */
    public static List<String> allTransports() {
        List<String> out = new ArrayList<>();
        REGISTERED.forEach(e -> e.transports.stream().filter(t -> !out.contains(t)).forEach(out::add));
        return out;
    }

    public boolean has(Feature f) {
        return features.contains(f);
    }

    /** The only {@code reservations} mode this engine keeps, or null when it has a choice. */
    public String onlyReservationMode() {
        return reservationModes.size() == 1 ? reservationModes.iterator().next() : null;
    }

    /** Why this engine lacks {@code f}. */
    public String refusal(Feature f, Object... args) {
        return refusal(f.name(), args);
    }

    /** Why this engine lacks what {@code key} names ({@code bdev.rbd}, {@code anaState}, ...), with {@code args}. */
    public String refusal(String key, Object... args) {
        String why = refusals.get(key);
        return why == null ? "not supported by the " + name + " engine" : String.format(why, args);
    }
}
