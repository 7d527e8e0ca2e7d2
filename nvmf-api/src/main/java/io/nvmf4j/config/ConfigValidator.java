package io.nvmf4j.config;

import io.nvmf4j.auth.AuthPolicy;
import io.nvmf4j.auth.KeyFiles;
import io.nvmf4j.auth.TlsPsk;
import io.nvmf4j.config.EngineCapabilities.Feature;
import io.nvmf4j.nvme.AnaLog;
import io.nvmf4j.nvme.AnaState;
import io.nvmf4j.runtime.IdleStrategyNames;
import io.nvmf4j.runtime.SocketIoNames;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.regex.Pattern;

/** Checks a whole configuration document and reports every problem with its field path. */
public final class ConfigValidator {
    private static final Pattern HEX32 = Pattern.compile("[0-9a-fA-F]{32}");
    private static final Pattern HEX16 = Pattern.compile("[0-9a-fA-F]{16}");
    private static final Pattern UUID_TEXT =
        Pattern.compile("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}");
    /** Bdev names: a letter, digit or '_' first, then letters, digits, '.', '_' and '-'; 1..63 characters. */
    /** RADOS pool and RBD image names: no '/' (pool/image) or '@' (image@snapshot), no whitespace. */
    private static final Pattern RBD_NAME = Pattern.compile("[^/@\\s]{1,255}");
    private static final Pattern RBD_CLIENT = Pattern.compile("client\\.[A-Za-z0-9._-]{1,100}");
    private static final Pattern BDEV_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]{0,62}");
    /** The largest bdev: 1 PiB (numBlocks x blockSize), far beyond any device and far from overflowing a long. */
    public static final long MAX_BDEV_BYTES = 1L << 50;
    /** Bdev types whose rules concern the bdev alone and its name ({@link #validateChange} checks them alone). */
    private static final Set<String> SCOPED_BDEV_TYPES = Set.of("malloc", "null", "file");

    private ConfigValidator() {
    }

    public static void validate(TargetConfig c) {
        List<String> p = new ArrayList<>();
        if (EngineCapabilities.of(c.engine) == null) {
            p.add("engine: must be " + String.join(" or ", EngineCapabilities.names()) + ", got " + c.engine);
        }
        EngineCapabilities engine = EngineCapabilities.forDocument(c);
        Ranges.check(p, "", c, "cores");
        if (c.pollGroupCores != null) {
            try {
                int named = SpdkCores.parse(c.pollGroupCores).cardinality();
                if (named != c.cores) {
                    p.add("pollGroupCores: names " + named + " CPU(s) for " + c.cores + " poll group(s) (cores); "
                        + "one each, got " + c.pollGroupCores);
                }
            } catch (IllegalArgumentException e) {
                p.add("pollGroupCores: " + e.getMessage());
            }
        }
        Range authTimeout = Ranges.of(TargetConfig.class, "authTimeoutMs");
        if (!Ranges.holds(authTimeout, c.authTimeoutMs)) {
            p.add(Ranges.refusal("authTimeoutMs", authTimeout, c.authTimeoutMs));
        } else if (!engine.has(Feature.AUTH_TIMEOUT) && c.authTimeoutMs != TargetConfig.DEFAULT_AUTH_TIMEOUT_MS) {
            p.add("authTimeoutMs: " + engine.refusal(Feature.AUTH_TIMEOUT));
        }
        Integer cqt = c.commandQuiesceTimeMs;
        if (cqt != null
            && (cqt < TargetConfig.MIN_COMMAND_QUIESCE_TIME_MS || cqt > TargetConfig.MAX_COMMAND_QUIESCE_TIME_MS)) {
            p.add("commandQuiesceTimeMs: must be " + TargetConfig.MIN_COMMAND_QUIESCE_TIME_MS + ".."
                + TargetConfig.MAX_COMMAND_QUIESCE_TIME_MS + ", got " + cqt);
        } else if (cqt != null && !engine.has(Feature.COMMAND_QUIESCE_TIME)) {
            p.add("commandQuiesceTimeMs: " + engine.refusal(Feature.COMMAND_QUIESCE_TIME));
        }
        if (c.idleStrategy == null || !IdleStrategyNames.isValid(c.idleStrategy)) {
            p.add("idleStrategy: must be busy, backoff or interrupt, got " + c.idleStrategy);
        }
        if (c.socketIo != null && !SocketIoNames.isValid(c.socketIo)) {
            p.add("socketIo: must be " + String.join(", ", SocketIoNames.ALL) + ", got " + c.socketIo);
        } else if (c.socketIo != null && !SocketIoNames.EPOLL.equals(c.socketIo) && !engine.has(Feature.SOCKET_IO)) {
            p.add("socketIo: " + engine.refusal(Feature.SOCKET_IO));
        }
        if (c.spdk == null) {
            p.add("spdk: missing");
        } else {
            validateSpdk(c.spdk, p);
        }
        if (c.tcp == null) {
            p.add("tcp: missing");
        } else {
            validateTcp(c.tcp, p);
        }
        if (c.rdma == null) {
            p.add("rdma: missing");
        } else {
            validateRdma(c.rdma, p);
        }
        if (c.storage != null) {
            FilePaths.validateStorage(c.storage, p);
        }
        Set<String> bdevNames = new HashSet<>();
        if (c.bdevs == null) {
            p.add("bdevs: must be a list (may be empty)");
        } else {
            for (int i = 0; i < c.bdevs.size(); i++) {
                if (c.bdevs.get(i) == null) {
                    p.add("bdevs[" + i + "]: null entry");
                } else {
                    validateBdev(c.bdevs.get(i), "bdevs[" + i + "]", bdevNames, c.storage, p);
                }
            }
        }
        PoolRules.validate(c, engine, p);
        QosRules.validate(c, engine, p);
        Function<String, BdevConfig> bdevs = bdevLookup(c);
        Set<String> nqns = new HashSet<>();
        Set<String> usedBdevs = new HashSet<>();
        Map<String, String> identities = new HashMap<>();
        if (c.subsystems == null) {
            p.add("subsystems: must be a list (may be empty)");
        } else {
            for (int i = 0; i < c.subsystems.size(); i++) {
                if (c.subsystems.get(i) == null) {
                    p.add("subsystems[" + i + "]: null entry");
                } else {
                    validateSubsystem(c, bdevs, c.subsystems.get(i), "subsystems[" + i + "]", nqns, usedBdevs,
                        identities, p);
                }
            }
            secureChannelsAgree(c.subsystems, p);
        }
        validateDiscovery(c, p);
        if (c.referrals == null) {
            p.add("referrals: must be a list (may be empty)");
        } else {
            Set<ReferralConfig> seen = new HashSet<>();
            for (int i = 0; i < c.referrals.size(); i++) {
                ReferralConfig r = c.referrals.get(i);
                String at = "referrals[" + i + "]";
                if (r == null) {
                    p.add(at + ": null entry");
                    continue;
                }
                if (!hasTransport(c, r.transport)) {
                    p.add(at + ".transport: must be " + transports(c) + ", got " + r.transport);
                }
                addressProblem(r.address, at + ".address", p);
                Ranges.check(p, at, r, "port");
                if (!seen.add(new ReferralConfig(r.transport, r.address, r.port))) {
                    p.add(at + ": duplicate referral " + r);
                }
            }
        }
        if (c.api == null) {
            p.add("api: missing");
        } else {
            boolean badAddress = addressProblem(c.api.address, "api.address", p);
            Ranges.check(p, "api", c.api, "port");
            if ((c.api.tlsCert == null) != (c.api.tlsKey == null)) {
                p.add("api.tlsCert/api.tlsKey: give both for TLS, or neither");
            } else if (!badAddress && c.api.port != 0 && c.api.tlsCert == null && !c.api.allowPlaintextOrDefault()
                && !loopback(c.api.address)) {
                p.add("api.address: " + c.api.address + " is not a loopback address and the API has no TLS, so the "
                    + "bearer token would cross the network in clear text; give api.tlsCert and api.tlsKey, bind a "
                    + "loopback address, or set api.allowPlaintext to true");
            }
            timeoutProblem(c.api.requestTimeoutSecondsOrDefault(), "api.requestTimeoutSeconds", p);
            timeoutProblem(c.api.idleTimeoutSecondsOrDefault(), "api.idleTimeoutSeconds", p);
            Ranges.check(p, "api", c.api, "requestsPerSecond");
            Ranges.check(p, "api", c.api, "requestBurst");
            if (c.api.token != null && c.api.token.length() < 16) {
                p.add("api.token: must be at least 16 characters");
            }
        }
        validateMetrics(c.metrics, engine, p);
        validateErrorBdevs(c, p);
        validateRbdEngine(c, p);
        validateRbdBounds(c, p);
        if (!p.isEmpty()) {
            throw new ConfigException(p);
        }
    }

    /**
     * Validates a document that differs from a valid one only in bdev {@code bdev} (added at {@code bdevAt} of
     * {@code bdevs}) and subsystem {@code s} (added or replaced at {@code subsystemAt} of {@code subsystems}), either
     * may be null: those two are checked with the rules of {@link #validate}, and the rules that tie them to the rest
     * of the document (unique bdev names, NQNs, bdev users and namespace identifiers, a namespace's bdev existing, one
     * secure channel per listener address) through {@code others}, the index of the rest (the touched items' old
     * entries taken out; the checks add the new ones). A document with pools, rbd or error bdevs (whose rules reach
     * every namespace) is validated whole, and so is any document the scoped checks find a problem in, so a refusal
     * names exactly the problems {@link #validate} names.
     */
    public static void validateChange(TargetConfig c, DocumentIndex others, BdevConfig bdev, int bdevAt,
                                      SubsystemConfig s, int subsystemAt) {
        if (others.hasCrossBdevs() || c.pools != null && !c.pools.isEmpty() || c.bdevs == null || c.subsystems == null
            || bdev != null && bdev.type != null && !SCOPED_BDEV_TYPES.contains(bdev.type) || hasQos(c, s)) {
            validate(c);
            return;
        }
        List<String> p = new ArrayList<>();
        if (bdev != null) {
            validateBdev(bdev, "bdevs[" + bdevAt + "]", others.bdevNames(), c.storage, p);
        }
        if (s != null) {
            if (s.namespaces != null && s.hosts != null && s.listeners != null) {
                others.visit(s.namespaces.size() + s.hosts.size() + s.listeners.size());
            }
            Function<String, BdevConfig> bdevs = name -> name != null && name.indexOf('/') >= 0 ? c.bdev(name)
                : others.bdev(name);
            validateSubsystem(c, bdevs, s, "subsystems[" + subsystemAt + "]", others.nqns(), others.usedBdevs(s),
                others.identities(), p);
            if (s.listeners != null && !others.secureChannelsAgree(s.listeners)) {
                p.add("secureChannel");
            }
        }
        if (!p.isEmpty()) {
            validate(c);
        }
    }

    /**
     * Whether QoS rules apply to a change of {@code s} (null: none): the document has groups (which name namespaces
     * across subsystems), or the subsystem or one of its namespaces has limits. Such a change is validated whole
     * ({@link QosRules} is not kept in the index).
     */
    private static boolean hasQos(TargetConfig c, SubsystemConfig s) {
        if (c.qosGroups == null || !c.qosGroups.isEmpty()) {
            return true;
        }
        if (s == null) {
            return false;
        }
        if (s.qos != null) {
            return true;
        }
        if (s.namespaces != null) {
            for (NamespaceConfig n : s.namespaces) {
                if (n != null && n.qos != null) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * Bdev by name as {@link TargetConfig#bdev} finds it (the first of that name; a volume by pool/volume), through a
     * map made once, so that checking every namespace's bdev is linear in the document.
     */
    private static Function<String, BdevConfig> bdevLookup(TargetConfig c) {
        Map<String, BdevConfig> byName = new HashMap<>();
        for (BdevConfig b : c.bdevs == null ? List.<BdevConfig>of() : c.bdevs) {
            if (b != null && b.name != null) {
                byName.putIfAbsent(b.name, b);
            }
        }
        return name -> name == null ? null : name.indexOf('/') >= 0 ? c.bdev(name) : byName.get(name);
    }

    /**
     * {@code rbd} bdevs need an engine that has them ({@link EngineCapabilities#bdevTypes}): SPDK's own rbd bdev module
     * exists only in an SPDK configured {@code --with-rbd}, and spdk-jni's build (spdk-jni/spdk-build.sh) is not.
     */
    private static void validateRbdEngine(TargetConfig c, List<String> p) {
        EngineCapabilities engine = EngineCapabilities.forDocument(c);
        if (c.bdevs == null || engine.bdevTypes().contains("rbd")) {
            return;
        }
        for (int i = 0; i < c.bdevs.size(); i++) {
            if (c.bdevs.get(i) != null && "rbd".equals(c.bdevs.get(i).type)) {
                p.add("bdevs[" + i + "].type: " + engine.refusal("bdev.rbd"));
            }
        }
    }

    /** Whether the document's engine has transport {@code name}. */
    private static boolean hasTransport(TargetConfig c, String name) {
        return name != null && EngineCapabilities.forDocument(c).transports().contains(name);
    }

    /** The document's engine's transports as a phrase for messages: {@code "tcp or rdma"}. */
    private static String transports(TargetConfig c) {
        return String.join(" or ", EngineCapabilities.forDocument(c).transports());
    }

    /**
     * What an rbd bdev must keep for the paths around it: its OSD op timeout below the Command Quiesce Time (a lost
     * controller's commands end within the bound Identify advertises), and librbd's cache only on an image no other
     * gateway serves (a namespace on it with reservations {@code shared}, directly or through an error bdev, or
     * exclusiveLock, says another may: an acknowledged write could still be in this client's cache, and a read
     * through the other gateway could miss it).
     */
    private static void validateRbdBounds(TargetConfig c, List<String> p) {
        if (c.bdevs == null) {
            return;
        }
        int cqt = c.commandQuiesceTimeMsOrDefault();
        for (int i = 0; i < c.bdevs.size(); i++) {
            BdevConfig b = c.bdevs.get(i);
            if (b == null || !"rbd".equals(b.type)) {
                continue;
            }
            String at = "bdevs[" + i + "]";
            if (b.osdOpTimeoutSecondsOrDefault() * 1000L >= cqt) {
                p.add(at + ".osdOpTimeoutSeconds: " + b.osdOpTimeoutSecondsOrDefault() + " s is not below"
                    + " commandQuiesceTimeMs " + cqt + " (a lost controller's commands must end within the Command"
                    + " Quiesce Time); lower it or raise commandQuiesceTimeMs");
            }
            if (b.cacheOrDefault() && (b.exclusiveLockOrDefault() || sharedNamespaceOn(c, b.name))) {
                p.add(at + ".cache: librbd's cache is for an image one gateway serves, but " + (b.exclusiveLockOrDefault()
                    ? "exclusiveLock is set" : "a namespace on it shares its reservations with other gateways")
                    + " (a write acknowledged here could still be in this client's cache when another gateway reads)");
            }
        }
    }

    /** Whether a namespace on bdev {@code name} (or on an error bdev over it) has reservations {@code shared}. */
    private static boolean sharedNamespaceOn(TargetConfig c, String name) {
        if (c.subsystems == null) {
            return false;
        }
        for (SubsystemConfig s : c.subsystems) {
            for (NamespaceConfig n : s == null || s.namespaces == null ? List.<NamespaceConfig>of() : s.namespaces) {
                BdevConfig on = n == null || n.bdev == null ? null : c.bdev(n.bdev);
                boolean over = on != null && (name.equals(on.name) || "error".equals(on.type) && name.equals(on.base));
                if (over && NamespaceConfig.RESERVATIONS_SHARED.equals(n.reservationsOrDefault(c, s))) {
                    return true;
                }
            }
        }
        return false;
    }

    /**
     * {@code error} bdevs: the base is a bdev listed before (so it exists when the error bdev is made), not
     * an error bdev, wrapped once, and backs no namespace (commands must pass the injection); only on an engine that
     * has them (the spdk engine's own error module would need its RPCs wired through spdk-jni).
     */
    private static void validateErrorBdevs(TargetConfig c, List<String> p) {
        if (c.bdevs == null) {
            return;
        }
        Map<String, String> wrappedBy = new HashMap<>();
        for (int i = 0; i < c.bdevs.size(); i++) {
            BdevConfig b = c.bdevs.get(i);
            if (b == null || !"error".equals(b.type)) {
                continue;
            }
            String at = "bdevs[" + i + "]";
            if (!EngineCapabilities.forDocument(c).bdevTypes().contains("error")) {
                p.add(at + ".type: " + EngineCapabilities.forDocument(c).refusal("bdev.error"));
            }
            BdevConfig base = null;
            for (int j = 0; j < i && b.base != null; j++) {
                if (c.bdevs.get(j) != null && b.base.equals(c.bdevs.get(j).name)) {
                    base = c.bdevs.get(j);
                }
            }
            if (base == null) {
                p.add(at + ".base: must name a bdev listed before this one, got " + (b.base == null ? "nothing"
                    : "'" + b.base + "'"));
            } else if ("error".equals(base.type)) {
                p.add(at + ".base: '" + b.base + "' is an error bdev itself; wrap its base instead");
            } else if (wrappedBy.putIfAbsent(b.base, b.name) != null) {
                p.add(at + ".base: '" + b.base + "' is already wrapped by error bdev '" + wrappedBy.get(b.base) + "'");
            }
        }
        for (SubsystemConfig s : c.subsystems == null ? List.<SubsystemConfig>of() : c.subsystems) {
            for (NamespaceConfig n : s == null || s.namespaces == null ? List.<NamespaceConfig>of() : s.namespaces) {
                if (n != null && n.bdev != null && wrappedBy.containsKey(n.bdev)) {
                    p.add("namespace " + n.nsid + " of " + s.nqn + ": bdev '" + n.bdev + "' is the base of error bdev '"
                        + wrappedBy.get(n.bdev) + "'; use '" + wrappedBy.get(n.bdev) + "'");
                }
            }
        }
    }

    /**
     * {@code metrics} (optional): latency bucket bounds positive, strictly ascending, bounded in count and size;
     * {@code perControllerMeters} only on an engine that counts I/O per controller ({@link Feature#IO_PER_HOST}).
     */
    private static void validateMetrics(MetricsConfig m, EngineCapabilities engine, List<String> p) {
        if (m != null && Boolean.TRUE.equals(m.perControllerMeters) && !engine.has(Feature.IO_PER_HOST)) {
            p.add("metrics.perControllerMeters: " + engine.refusal(Feature.IO_PER_HOST));
        }
        List<Long> b = m == null ? null : m.latencyBucketsMicros;
        if (b == null) {
            return;
        }
        if (b.isEmpty() || b.size() > MetricsConfig.MAX_LATENCY_BUCKETS) {
            p.add("metrics.latencyBucketsMicros: must list 1.." + MetricsConfig.MAX_LATENCY_BUCKETS
                + " bucket bounds, got " + b.size());
            return;
        }
        for (int i = 0; i < b.size(); i++) {
            Long v = b.get(i);
            String at = "metrics.latencyBucketsMicros[" + i + "]";
            if (v == null || v <= 0 || v > MetricsConfig.MAX_LATENCY_BUCKET_MICROS) {
                p.add(at + ": must be 1.." + MetricsConfig.MAX_LATENCY_BUCKET_MICROS + " (microseconds), got " + v);
            } else if (i > 0 && b.get(i - 1) != null && v <= b.get(i - 1)) {
                p.add(at + ": must be greater than the bound before it (" + b.get(i - 1) + "), got " + v);
            }
        }
    }

    /**
     * DH-HMAC-CHAP keys and TLS PSKs: one entry per allowed host, each naming readable key files ({@link KeyFiles}:
     * absolute, a regular file of mode 0600, a valid DHHC-1 or NVMeTLSkey-1 key). The spdk engine takes the same
     * entries; its TLS PSKs must say {@code tlsKeyDerivation: rfc8446} ({@link Feature#LIBNVME_TLS_DERIVATION}).
     */
    private static void validateHostKeys(TargetConfig c, SubsystemConfig s, String at, List<String> p) {
        if (s.hostKeys == null) {
            p.add(at + ".hostKeys: must be a list (may be empty)");
            return;
        }
        Set<String> keyed = new HashSet<>();
        for (int i = 0; i < s.hostKeys.size(); i++) {
            HostKeyConfig k = s.hostKeys.get(i);
            String kat = at + ".hostKeys[" + i + "]";
            if (k == null || k.host == null || k.dhchapKey == null && k.tlsKey == null) {
                p.add(kat + ": needs host and dhchapKey or tlsKey");
                continue;
            }
            if (k.dhchapKey == null && k.dhchapCtrlKey != null) {
                p.add(kat + ".dhchapCtrlKey: needs dhchapKey too");
            }
            if (!keyed.add(k.host)) {
                p.add(kat + ": duplicate host " + k.host);
            } else if (!s.allowAnyHost && !s.hosts.contains(k.host)) {
                p.add(kat + ": host " + k.host + " is not in hosts (and allowAnyHost is off); allow it there too");
            }
            String problem = k.dhchapKey == null ? null : KeyFiles.problem(k.dhchapKey);
            if (problem != null) {
                p.add(kat + ".dhchapKey: " + problem);
            }
            tlsKeyProblems(c, k, kat, p);
            if (k.tlsKey != null && !s.listeners.isEmpty() && s.listeners.stream().noneMatch(ConfigValidator::takesTls)) {
                // the Connect of a PSK host over a plain queue is refused: on plain listeners only it never connects
                p.add(kat + ".tlsKey: host " + k.host + " has a TLS PSK, so it must connect over TLS, but every"
                    + " listener of this subsystem is plain; add a tcp listener with secureChannel required (or"
                    + " optional), or remove the tlsKey");
            }
            problem = k.dhchapCtrlKey == null ? null : KeyFiles.problem(k.dhchapCtrlKey);
            if (problem != null) {
                p.add(kat + ".dhchapCtrlKey: " + problem);
            }
            authPolicyProblem(c, k, k.dhchapHashes, AuthPolicy.HASHES, kat + ".dhchapHashes", p);
            authPolicyProblem(c, k, k.dhchapDhGroups, AuthPolicy.GROUPS, kat + ".dhchapDhGroups", p);
        }
    }

    /** A host's allowed hashes or DH groups ({@link AuthPolicy}): absent, or some of {@code names}. */
    private static void authPolicyProblem(TargetConfig c, HostKeyConfig k, List<String> given, List<String> names,
                                          String at, List<String> p) {
        if (given == null) {
            return;
        }
        if (k.dhchapKey == null) {
            p.add(at + ": needs dhchapKey too (it limits DH-HMAC-CHAP)");
        } else if (!EngineCapabilities.forDocument(c).has(Feature.HOST_AUTH_POLICY)) {
            p.add(at + ": " + EngineCapabilities.forDocument(c).refusal(Feature.HOST_AUTH_POLICY));
        } else if (given.isEmpty()) {
            p.add(at + ": must name at least one of " + String.join(", ", names) + " (or be left out: all)");
        } else {
            for (String name : given) {
                if (!names.contains(name)) {
                    p.add(at + ": must be of " + String.join(", ", names) + ", got " + name);
                    return;
                }
            }
        }
    }

    /** Whether {@code l} takes TLS connections (a tcp listener whose secure channel is optional or required). */
    private static boolean takesTls(ListenerConfig l) {
        return l != null && "tcp".equals(l.transport) && !ListenerConfig.SECURE_NONE.equals(l.secureChannelOrDefault());
    }

    /** A host key entry's TLS PSK file (when it names one) and its derivation. */
    private static void tlsKeyProblems(TargetConfig c, HostKeyConfig k, String kat, List<String> p) {
        String problem = k.tlsKey == null ? null : KeyFiles.tlsPskProblem(k.tlsKey);
        if (problem != null) {
            p.add(kat + ".tlsKey: " + problem);
        }
        try {
            TlsPsk.Derivation d = TlsPsk.Derivation.of(k.tlsKeyDerivation);
            if (k.tlsKey != null && d != TlsPsk.Derivation.RFC8446
                && !EngineCapabilities.forDocument(c).has(Feature.LIBNVME_TLS_DERIVATION)) {
                p.add(kat + ".tlsKeyDerivation: " + EngineCapabilities.forDocument(c).refusal(
                    Feature.LIBNVME_TLS_DERIVATION, k.tlsKeyDerivation == null ? "none, meaning libnvme"
                        : k.tlsKeyDerivation));
            }
        } catch (IllegalArgumentException e) {
            p.add(kat + ".tlsKeyDerivation: " + e.getMessage());
        }
    }

    /**
     * The discovery subsystem's host keys: TLS PSKs only (a host NQN and a tlsKey each; DH-HMAC-CHAP to the discovery
     * subsystem is not supported), one entry per host; java engine only.
     */
    private static void validateDiscovery(TargetConfig c, List<String> p) {
        if (c.discovery == null) {
            return;
        }
        List<HostKeyConfig> keys = c.discovery.hostKeys;
        if (keys == null) {
            p.add("discovery.hostKeys: must be a list (may be empty)");
            return;
        }
        if (!keys.isEmpty() && !EngineCapabilities.forDocument(c).has(Feature.DISCOVERY_HOST_KEYS)) {
            p.add("discovery.hostKeys: " + EngineCapabilities.forDocument(c).refusal(Feature.DISCOVERY_HOST_KEYS));
            return;
        }
        Set<String> keyed = new HashSet<>();
        for (int i = 0; i < keys.size(); i++) {
            HostKeyConfig k = keys.get(i);
            String kat = "discovery.hostKeys[" + i + "]";
            if (k == null || k.host == null || k.tlsKey == null) {
                p.add(kat + ": needs host and tlsKey");
                continue;
            }
            if (k.dhchapKey != null || k.dhchapCtrlKey != null) {
                p.add(kat + ": DH-HMAC-CHAP keys (dhchapKey, dhchapCtrlKey) are not supported on the discovery"
                    + " subsystem; it takes tlsKey only");
            }
            if (Nqn.DISCOVERY.equals(k.host)) {
                p.add(kat + ".host: the discovery NQN is not a host NQN");
            } else if (!nqnProblem(c, k.host, kat + ".host", p) && !keyed.add(k.host)) {
                p.add(kat + ": duplicate host " + k.host);
            }
            tlsKeyProblems(c, k, kat, p);
        }
    }


    private static void validateSpdk(SpdkConfig s, List<String> p) {
        try {
            SpdkCores.parse(s.coreMask);
        } catch (IllegalArgumentException e) {
            p.add("spdk.coreMask: " + e.getMessage());
        }
        Ranges.check(p, "spdk", s, "memSizeMb");
        Ranges.check(p, "spdk", s, "callTimeoutMs");
        Range shared = Ranges.of(SpdkConfig.class, "sharedBuffers");
        if (!Ranges.holds(shared, s.sharedBuffers)) {
            p.add("spdk.sharedBuffers: must be " + shared.min() + " (SPDK's default).." + shared.max() + ", got "
                + s.sharedBuffers);
        }
    }

    /** Why one 4 KiB page is not a transfer size a target can report (TransportLimits#mdtsField). */
    private static final String MDTS_REASON = " (Identify's MDTS is a power of two of 4 KiB pages whose 0 means"
        + " no limit: one page cannot be reported)";

    private static void validateTcp(TcpTransportConfig t, List<String> p) {
        validateQueues("tcp", t, p);
        mdtsProblem("tcp", t.mdtsBytes, Ranges.of(TcpTransportConfig.class, "mdtsBytes"), p);
        Range h2c = Ranges.of(TcpTransportConfig.class, "maxH2cData");
        if (!Ranges.holds(h2c, t.maxH2cData)) {
            p.add("tcp.maxH2cData: must be a multiple of " + h2c.multipleOf() + " from " + h2c.min() + " to "
                + h2c.max() + ", got " + t.maxH2cData);
        }
        Range connect = Ranges.of(TcpTransportConfig.class, "connectTimeoutMs");
        if (t.connectTimeoutMs != 0 && (t.connectTimeoutMs < 100 || !Ranges.holds(connect, t.connectTimeoutMs))) {
            p.add("tcp.connectTimeoutMs: must be 0 (no limit) or 100.." + connect.max() + ", got " + t.connectTimeoutMs);
        }
        validateConnectionLimits("tcp", t, p);
        Range socket = Ranges.of(TcpTransportConfig.class, "socketBufferBytes");
        if (t.socketBufferBytes != 0 && (t.socketBufferBytes < 4096 || !Ranges.holds(socket, t.socketBufferBytes))) {
            p.add("tcp.socketBufferBytes: must be 0 (the kernel's autotuning) or 4096.." + socket.max() + ", got "
                + t.socketBufferBytes);
        }
    }

    /** A transport's in-capsule data size, queue depth and I/O queue count against their declared ranges. */
    private static void validateQueues(String transport, Object t, List<String> p) {
        Ranges.check(p, transport, t, "inCapsuleDataSize");
        Ranges.check(p, transport, t, "maxQueueDepth");
        Ranges.check(p, transport, t, "maxIoQueues");
    }

    private static void mdtsProblem(String transport, int mdtsBytes, Range r, List<String> p) {
        if (!Ranges.holds(r, mdtsBytes) || Integer.bitCount(mdtsBytes) != 1) {
            p.add(transport + ".mdtsBytes: must be a power of two from " + r.min() + " to " + r.max() + MDTS_REASON
                + ", got " + mdtsBytes);
        }
    }

    private static void validateConnectionLimits(String transport, Object t, List<String> p) {
        Ranges.check(p, transport, t, "maxConnectionsPerListener");
        Ranges.check(p, transport, t, "maxConnectionsPerHost");
    }

    private static void validateRdma(RdmaTransportConfig r, List<String> p) {
        validateQueues("rdma", r, p);
        mdtsProblem("rdma", r.mdtsBytes, Ranges.of(RdmaTransportConfig.class, "mdtsBytes"), p);
        Ranges.check(p, "rdma", r, "srqDepth");
        Range buffers = Ranges.of(RdmaTransportConfig.class, "dataBuffers");
        if (!Ranges.holds(buffers, r.dataBuffers) || (long) r.dataBuffers * r.mdtsBytes > Integer.MAX_VALUE) {
            p.add("rdma.dataBuffers: must be " + Ranges.span(buffers) + " and dataBuffers x mdtsBytes below 2 GiB, got "
                + r.dataBuffers);
        }
        Ranges.check(p, "rdma", r, "cqSize");
        Ranges.check(p, "rdma", r, "maxReadDepth");
        Ranges.check(p, "rdma", r, "maxParkedCapsules");
        Ranges.check(p, "rdma", r, "rnrRetryCount");
        validateConnectionLimits("rdma", r, p);
    }

    private static void validateBdev(BdevConfig b, String at, Set<String> names, StorageConfig storage,
                                     List<String> p) {
        if (b.name == null || b.name.isBlank()) {
            p.add(at + ".name: missing");
        } else if (!BDEV_NAME.matcher(b.name).matches()) {
            p.add(at + ".name: must be 1..63 of A-Z a-z 0-9 . _ - and not start with '.' or '-', got '" + b.name
                + "'");
        } else if (!names.add(b.name)) {
            p.add(at + ".name: duplicate bdev name '" + b.name + "'");
        }
        if (b.blockSize != 512 && b.blockSize != 4096) {
            p.add(at + ".blockSize: must be 512 or 4096, got " + b.blockSize);
        } else if (b.numBlocks > MAX_BDEV_BYTES / b.blockSize) {
            p.add(at + ".numBlocks: " + b.numBlocks + " blocks of " + b.blockSize + " bytes exceed the largest bdev ("
                + MAX_BDEV_BYTES / b.blockSize + " blocks, 1 PiB)");
        }
        if (b.type == null) {
            p.add(at + ".type: missing (malloc, null, file, rbd or error)");
            return;
        }
        if (b.maxHeldCommands != null && !"error".equals(b.type)) {
            p.add(at + ".maxHeldCommands: only error bdevs hold commands");
        }
        if (!"rbd".equals(b.type) && (b.pool != null || b.image != null || b.cephConf != null
            || b.clientName != null || b.keyring != null || b.create != null || b.timeoutSeconds != null
            || b.osdOpTimeoutSeconds != null || b.cache != null || b.exclusiveLock != null)) {
            p.add(at + ": pool, image, cephConf, clientName, keyring, create, timeoutSeconds, osdOpTimeoutSeconds, cache"
                + " and exclusiveLock belong to rbd bdevs");
        }
        if (b.base != null && !"error".equals(b.type)) {
            p.add(at + ".base: only error bdevs wrap a base");
        }
        switch (b.type) {
            case "malloc", "null" -> {
                if (b.numBlocks <= 0) {
                    p.add(at + ".numBlocks: must be positive for a " + b.type + " bdev");
                }
                if (b.path != null) {
                    p.add(at + ".path: only file bdevs have a path");
                }
                if (b.ioWorkers != null) {
                    p.add(at + ".ioWorkers: only file bdevs have I/O workers");
                }
                if (b.ioQueueDepth != null) {
                    p.add(at + ".ioQueueDepth: only file bdevs have an I/O queue");
                }
                if (b.ioEngine != null) {
                    p.add(at + ".ioEngine: only file bdevs have an I/O engine");
                }
            }
            case "file" -> {
                if (b.directIo && b.blockSize < 4096) {
                    p.add(at + ".blockSize: directIo needs 4096-byte blocks, got " + b.blockSize);
                }
                if (b.path == null || b.path.isBlank()) {
                    p.add(at + ".path: missing for a file bdev");
                } else {
                    FilePaths.validatePath(b.path, storage, at + ".path", p);
                }
                if (b.numBlocks < 0) {
                    p.add(at + ".numBlocks: must not be negative");
                }
                Ranges.check(p, at, b, "ioWorkers");
                Ranges.check(p, at, b, "ioQueueDepth");
                if (b.ioEngine != null && !BdevConfig.IO_ENGINES.contains(b.ioEngine)) {
                    p.add(at + ".ioEngine: must be one of " + String.join(", ", BdevConfig.IO_ENGINES) + ", got '"
                        + b.ioEngine + "'");
                }
            }
            case "error" -> {
                if (b.numBlocks != 0) {
                    p.add(at + ".numBlocks: an error bdev has its base's size; leave it out");
                }
                if (b.path != null || b.directIo || b.ioWorkers != null || b.ioQueueDepth != null || b.ioEngine != null) {
                    p.add(at + ": path, directIo, ioWorkers, ioQueueDepth and ioEngine belong to the base, not the error"
                        + " bdev");
                }
                if (b.maxHeldCommands != null
                    && (b.maxHeldCommands < 1 || b.maxHeldCommands > BdevConfig.MAX_MAX_HELD_COMMANDS)) {
                    p.add(at + ".maxHeldCommands: must be 1.." + BdevConfig.MAX_MAX_HELD_COMMANDS + ", got "
                        + b.maxHeldCommands);
                }
            }
            case "rbd" -> validateRbdBdev(b, storage, at, p);
            default -> p.add(at + ".type: must be malloc, null, file, rbd or error, got '" + b.type + "'");
        }
    }

    /**
     * An rbd bdev: pool and image named as Ceph allows, its config and keyring under {@code storage.cephDirectories},
     * a client name, sane timeouts.
     */
    private static void validateRbdBdev(BdevConfig b, StorageConfig storage, String at, List<String> p) {
        validateRbdConnection(b.pool, b.cephConf, b.clientName, b.keyring, storage, at, "an rbd bdev", p);
        if (b.image == null || b.image.isBlank()) {
            p.add(at + ".image: missing for an rbd bdev (the RBD image's name)");
        } else if (!RBD_NAME.matcher(b.image).matches()) {
            p.add(at + ".image: must be 1..255 characters without '/', '@' or whitespace, got '" + b.image + "'");
        }
        if (b.numBlocks < 0) {
            p.add(at + ".numBlocks: must not be negative");
        } else if (b.createOrDefault() && b.numBlocks == 0) {
            p.add(at + ".numBlocks: must be positive with create (the size of the image to make)");
        }
        if (b.timeoutSeconds != null && (b.timeoutSeconds < 1 || b.timeoutSeconds > BdevConfig.MAX_RBD_TIMEOUT_SECONDS)) {
            p.add(at + ".timeoutSeconds: must be 1.." + BdevConfig.MAX_RBD_TIMEOUT_SECONDS + ", got " + b.timeoutSeconds);
        }
        if (b.osdOpTimeoutSeconds != null && (b.osdOpTimeoutSeconds < 1
            || b.osdOpTimeoutSeconds > BdevConfig.MAX_RBD_OSD_OP_TIMEOUT_SECONDS)) {
            p.add(at + ".osdOpTimeoutSeconds: must be 1.." + BdevConfig.MAX_RBD_OSD_OP_TIMEOUT_SECONDS + ", got "
                + b.osdOpTimeoutSeconds);
        }
        if (b.path != null || b.directIo || b.ioWorkers != null || b.ioQueueDepth != null || b.ioEngine != null) {
            p.add(at + ": path, directIo, ioWorkers, ioQueueDepth and ioEngine belong to file bdevs, not rbd");
        }
    }

    /**
     * How an rbd bdev or an rbd pool ({@code what}) reaches its RADOS pool: the pool named as Ceph allows, the config
     * and keyring under {@code storage.cephDirectories}, a client name of the form {@code client.NAME}.
     */
    static void validateRbdConnection(String pool, String cephConf, String clientName, String keyring,
                                      StorageConfig storage, String at, String what, List<String> p) {
        if (pool == null || pool.isBlank()) {
            p.add(at + ".pool: missing for " + what + " (the RADOS pool)");
        } else if (!RBD_NAME.matcher(pool).matches()) {
            p.add(at + ".pool: must be 1..255 characters without '/', '@' or whitespace, got '" + pool + "'");
        }
        if (cephConf != null) {
            FilePaths.validateCephPath(cephConf, storage, at + ".cephConf", p);
        }
        if (keyring != null) {
            FilePaths.validateCephPath(keyring, storage, at + ".keyring", p);
        }
        if (clientName != null && !RBD_CLIENT.matcher(clientName).matches()) {
            p.add(at + ".clientName: must be client.NAME (letters, digits, '.', '_', '-'), got '" + clientName + "'");
        }
    }

    private static void validateSubsystem(TargetConfig c, Function<String, BdevConfig> bdevs, SubsystemConfig s,
                                          String at, Set<String> nqns, Set<String> usedBdevs,
                                          Map<String, String> identities, List<String> p) {
        if (Nqn.DISCOVERY.equals(s.nqn)) {
            p.add(at + ".nqn: the discovery NQN is reserved");
        } else if (nqnProblem(c, s.nqn, at + ".nqn", p)) {
            // reported
        } else if (!nqns.add(s.nqn)) {
            p.add(at + ".nqn: duplicate subsystem " + s.nqn);
        }
        if (s.serial != null && (s.serial.isEmpty() || s.serial.length() > 20 || !printableAscii(s.serial))) {
            p.add(at + ".serial: must be 1..20 printable ASCII characters");
        }
        if (s.model == null || s.model.isEmpty() || s.model.length() > 40 || !printableAscii(s.model)) {
            p.add(at + ".model: must be 1..40 printable ASCII characters");
        }
        Ranges.check(p, at, s, "maxNamespaces");
        Range cntlid = Ranges.of(SubsystemConfig.class, "maxCntlid");
        if (s.minCntlid < cntlid.min() || s.maxCntlid > cntlid.max() || s.minCntlid > s.maxCntlid) {
            p.add(at + ".minCntlid/maxCntlid: need " + cntlid.min() + " <= minCntlid <= maxCntlid <= " + cntlid.max());
        }
        if (s.hosts == null || s.namespaces == null || s.listeners == null) {
            p.add(at + ": hosts, namespaces and listeners must be lists (may be empty)");
            return;
        }
        Set<String> hosts = new HashSet<>();
        for (int i = 0; i < s.hosts.size(); i++) {
            String h = s.hosts.get(i);
            if (Nqn.DISCOVERY.equals(h)) {
                p.add(at + ".hosts[" + i + "]: the discovery NQN is not a host NQN");
            } else if (!nqnProblem(c, h, at + ".hosts[" + i + "]", p) && !hosts.add(h)) {
                p.add(at + ".hosts[" + i + "]: duplicate host " + h);
            }
        }
        validateHostKeys(c, s, at, p);
        Set<Integer> nsids = new HashSet<>();
        for (int i = 0; i < s.namespaces.size(); i++) {
            NamespaceConfig n = s.namespaces.get(i);
            String nat = at + ".namespaces[" + i + "]";
            if (n == null) {
                p.add(nat + ": null entry");
                continue;
            }
            if (n.nsid < 1 || n.nsid > s.maxNamespaces) {
                p.add(nat + ".nsid: must be 1.." + s.maxNamespaces + ", got " + n.nsid);
            } else if (!nsids.add(n.nsid)) {
                p.add(nat + ".nsid: duplicate nsid " + n.nsid);
            }
            if (n.bdev == null || bdevs.apply(n.bdev) == null) {
                p.add(nat + ".bdev: no bdev named '" + n.bdev + "'");
            } else if (!usedBdevs.add(n.bdev)) {
                p.add(nat + ".bdev: bdev '" + n.bdev + "' already backs another namespace");
            }
            if (n.hosts != null) {
                Set<String> seen = new HashSet<>();
                for (int j = 0; j < n.hosts.size(); j++) {
                    String h = n.hosts.get(j);
                    String hat = nat + ".hosts[" + j + "]";
                    if (Nqn.DISCOVERY.equals(h)) {
                        p.add(hat + ": the discovery NQN is not a host NQN");
                    } else if (!nqnProblem(c, h, hat, p) && !seen.add(h)) {
                        p.add(hat + ": duplicate host " + h);
                    }
                }
            }
            if (n.anaGroup != null && !anaGroupProblem(String.valueOf(n.anaGroup), nat + ".anaGroup", p)) {
                engineAnaGroupProblem(c, s, n.anaGroup, nat + ".anaGroup", p);
            }
            reservationsProblem(c, n, nat + ".reservations", p);
            String owner = "namespace " + n.nsid + " of " + s.nqn;
            identity(n.nguid, HEX32, "32 hex digits", nat + ".nguid", "nguid", owner, identities, p);
            identity(n.uuid, UUID_TEXT, "a UUID (8-4-4-4-12 hex digits)", nat + ".uuid", "uuid", owner, identities, p);
            identity(n.eui64, HEX16, "16 hex digits", nat + ".eui64", "eui64", owner, identities, p);
        }
        Set<ListenerConfig> listeners = new HashSet<>();
        for (int i = 0; i < s.listeners.size(); i++) {
            ListenerConfig l = s.listeners.get(i);
            String lat = at + ".listeners[" + i + "]";
            if (l == null) {
                p.add(lat + ": null entry");
                continue;
            }
            if (!hasTransport(c, l.transport)) {
                p.add(lat + ".transport: must be " + transports(c) + ", got " + l.transport);
            }
            boolean addressOk = !addressProblem(l.address, lat + ".address", p);
            Range port = Ranges.of(ListenerConfig.class, "port");
            if (!Ranges.holds(port, l.port)) {
                p.add(Ranges.refusal(lat + ".port", port, l.port));
            } else if (addressOk && hasTransport(c, l.transport)
                && !listeners.add(new ListenerConfig(l.transport, l.address, l.port))) {
                p.add(lat + ": duplicate listener " + new ListenerConfig(l.transport, l.address, l.port));
            }
            if (l.anaStates != null) {
                anaStatesProblems(c, s, l.anaStates, lat + ".anaStates", p);
            }
            secureChannelProblem(c, l, lat + ".secureChannel", p);
        }
        anaLogFits(c, s, at, p);
    }

    /**
     * A namespace's {@code reservations}: one of {@link NamespaceConfig#RESERVATIONS}; {@code shared} only where a
     * state every instance reads exists (an rbd image); the spdk engine keeps SPDK's own, per instance.
     */
    private static void reservationsProblem(TargetConfig c, NamespaceConfig n, String at, List<String> p) {
        if (n.reservations == null) {
            return;
        }
        if (!NamespaceConfig.RESERVATIONS.contains(n.reservations)) {
            p.add(at + ": must be " + String.join(", ", NamespaceConfig.RESERVATIONS) + ", got " + n.reservations);
        } else if (!EngineCapabilities.forDocument(c).reservationModes().contains(n.reservations)) {
            p.add(at + ": " + EngineCapabilities.forDocument(c).refusal("reservations", n.reservations));
        } else if (NamespaceConfig.RESERVATIONS_SHARED.equals(n.reservations)
            && !NamespaceConfig.sharesState(c, n.bdev) && c.bdev(n.bdev) != null) {
            p.add(at + ": shared keeps the reservation in an rbd image, which every instance reads; bdev '" + n.bdev
                + "' is " + c.bdev(n.bdev).type + " (use local when this instance alone exports the namespace,"
                + " else off)");
        }
    }

    /**
     * The ANA log page a host reads in one command (java engine): Identify reports as many groups (NANAGRPID) as
     * fit in the MDTS of the listener's transport next to maxNamespaces NSIDs (AnaLog#groupsFitting; Linux turns ANA
     * off when the page exceeds MDTS). Not even one group fitting, or fewer than the namespaces use, is refused.
     */
    private static void anaLogFits(TargetConfig c, SubsystemConfig s, String at, List<String> p) {
        if (!EngineCapabilities.forDocument(c).has(Feature.ANA_LOG_WITHIN_MDTS) || s.maxNamespaces < 1
            || s.maxNamespaces > SubsystemConfig.MAX_NAMESPACES) {
            return;
        }
        Set<Integer> groups = new HashSet<>();
        for (NamespaceConfig n : s.namespaces) {
            if (n != null) {
                groups.add(n.anaGroupOrDefault());
            }
        }
        Set<String> checked = new HashSet<>();
        for (ListenerConfig l : s.listeners) {
            int mdts = l == null ? 0 : "tcp".equals(l.transport) && c.tcp != null ? c.tcp.mdtsBytes
                : "rdma".equals(l.transport) && c.rdma != null ? c.rdma.mdtsBytes : 0;
            if (mdts < TcpTransportConfig.MIN_MDTS_BYTES || !checked.add(l.transport)) {
                continue;
            }
            int fit = AnaLog.groupsFitting(mdts, s.maxNamespaces);
            if (fit < 1) {
                p.add(at + ".maxNamespaces: the ANA log page (16 bytes, 32 per ANA group, 4 per namespace) must fit"
                    + " in " + l.transport + ".mdtsBytes " + mdts + " (a Linux host turns ANA off otherwise): at most "
                    + (mdts - AnaLog.HEADER_SIZE - AnaLog.DESCRIPTOR_SIZE) / 4 + ", got " + s.maxNamespaces);
            } else if (groups.size() > fit) {
                p.add(at + ".namespaces: " + groups.size() + " ANA groups (anaGroup), but the ANA log page holds " + fit
                    + " within " + l.transport + ".mdtsBytes " + mdts + " next to maxNamespaces " + s.maxNamespaces
                    + " NSIDs; raise mdtsBytes or lower maxNamespaces");
            }
        }
    }

    /**
     * {@code secureChannel}: none, optional or required; TCP listeners only. The spdk engine has no {@code optional}:
     * SPDK's target listens either with its posix socket (plain) or its ssl one (TLS only) on an address.
     */
    private static void secureChannelProblem(TargetConfig c, ListenerConfig l, String at, List<String> p) {
        if (l.secureChannel == null || ListenerConfig.SECURE_NONE.equals(l.secureChannel)) {
            return;
        }
        if (!ListenerConfig.SECURE_OPTIONAL.equals(l.secureChannel)
            && !ListenerConfig.SECURE_REQUIRED.equals(l.secureChannel)) {
            p.add(at + ": must be none, optional or required, got " + l.secureChannel);
        } else if (!"tcp".equals(l.transport)) {
            p.add(at + ": a secure channel (TLS) is for tcp listeners only");
        } else if (!EngineCapabilities.forDocument(c).secureChannels().contains(l.secureChannel)) {
            p.add(at + ": " + EngineCapabilities.forDocument(c).refusal("secureChannel." + l.secureChannel));
        }
    }

    /** One socket serves a listener address for every subsystem on it, so they must agree on its secure channel. */
    private static void secureChannelsAgree(List<SubsystemConfig> subsystems, List<String> p) {
        Map<ListenerConfig, String> seen = new HashMap<>();
        for (int i = 0; i < subsystems.size(); i++) {
            SubsystemConfig s = subsystems.get(i);
            for (int j = 0; s != null && s.listeners != null && j < s.listeners.size(); j++) {
                ListenerConfig l = s.listeners.get(j);
                if (l == null || l.address == null || l.transport == null) {
                    continue;
                }
                String here = "subsystems[" + i + "]";
                String first = seen.putIfAbsent(l, here + " " + l.secureChannelOrDefault());
                if (first != null && !first.endsWith(" " + l.secureChannelOrDefault())) {
                    p.add(here + ".listeners[" + j + "].secureChannel: " + l.secureChannelOrDefault() + " but "
                        + first.replace(" ", " has ") + " on the same listener " + l + " (one socket serves both)");
                }
            }
        }
    }

    /**
     * A listener's ANA states: group ids 1..{@link AnaLog#GROUPS_MAX} to state names. SPDK's listeners have three of
     * the five states ({@code spdk_nvmf_subsystem_set_ana_state} refuses persistent loss and change).
     */
    private static void anaStatesProblems(TargetConfig c, SubsystemConfig s, Map<String, String> states, String at,
                                          List<String> p) {
        states.forEach((group, state) -> {
            if (anaGroupProblem(group, at + "." + group, p)
                || engineAnaGroupProblem(c, s, Integer.parseInt(group), at + "." + group, p)) {
                return;
            }
            AnaState st = AnaState.byName(state);
            if (st == null) {
                p.add(at + "." + group + ": must be " + AnaState.names() + ", got " + state);
            } else if (!EngineCapabilities.forDocument(c).anaStates().contains(st)) {
                p.add(at + "." + group + ": " + EngineCapabilities.forDocument(c).refusal("anaState", state));
            }
        });
    }

    /**
     * SPDK numbers a subsystem's ANA groups 1..maxNamespaces (its ANAGRPMAX and NANAGRPID are the subsystem's
     * namespace count); reports a group above that on an engine without
     * {@link Feature#ANA_GROUPS_ABOVE_MAX_NAMESPACES}, and returns whether it did.
     */
    private static boolean engineAnaGroupProblem(TargetConfig c, SubsystemConfig s, int group, String at,
                                               List<String> p) {
        EngineCapabilities engine = EngineCapabilities.forDocument(c);
        if (!engine.has(Feature.ANA_GROUPS_ABOVE_MAX_NAMESPACES) && group > s.maxNamespaces) {
            p.add(at + ": " + engine.refusal(Feature.ANA_GROUPS_ABOVE_MAX_NAMESPACES, s.maxNamespaces, group));
            return true;
        }
        return false;
    }

    /** Reports an ANA group id that is not 1..{@link AnaLog#GROUPS_MAX}; returns whether it was bad. */
    public static boolean anaGroupProblem(String group, String at, List<String> p) {
        int g;
        try {
            g = Integer.parseInt(group);
        } catch (NumberFormatException e) {
            g = -1;
        }
        Range ana = Ranges.of(NamespaceConfig.class, "anaGroup");
        if (!Ranges.holds(ana, g) || !group.equals(Integer.toString(g))) {
            p.add(at + ": an ANA group id must be " + Ranges.span(ana) + ", got " + group);
            return true;
        }
        return false;
    }

    /** Reports a bad NQN at {@code at}; returns whether it was bad. */
    static boolean nqnProblem(TargetConfig c, String nqn, String at, List<String> p) {
        String problem = Nqn.problem(nqn, c.allowLegacyNqns);
        if (problem != null) {
            p.add(at + ": " + problem);
        }
        return problem != null;
    }

    /**
     * Checks one namespace identifier: its form, never all zeros (the spec's "not reported"), and unique among
     * every namespace of the document (Linux refuses a namespace whose NGUID, UUID or EUI-64 another one has,
     * within a subsystem and, since 5.18, across subsystems).
     */
    private static void identity(String value, Pattern form, String described, String at, String kind,
                                 String owner, Map<String, String> seen, List<String> p) {
        if (value == null) {
            return;
        }
        if (!form.matcher(value).matches()) {
            p.add(at + ": must be " + described + ", got '" + value + "'");
            return;
        }
        String hex = value.replace("-", "").toLowerCase(Locale.ROOT);
        if (hex.chars().allMatch(ch -> ch == '0')) {
            p.add(at + ": must not be all zeros (that means \"no " + kind + "\"; leave it out to have one generated)");
            return;
        }
        String other = seen.putIfAbsent(kind + ":" + hex, owner);
        if (other != null) {
            p.add(at + ": " + kind + " " + value + " is already used by " + other);
        }
    }

    private static boolean printableAscii(String s) {
        return s.chars().allMatch(ch -> ch >= 0x20 && ch < 0x7F);
    }

    private static void timeoutProblem(int seconds, String at, List<String> p) {
        Range r = Ranges.of(ApiConfig.class, "requestTimeoutSeconds");
        if (!Ranges.holds(r, seconds)) {
            p.add(at + ": must be " + Ranges.span(r) + " seconds, got " + seconds);
        }
    }

    /** Whether a valid address literal is a loopback one (127.0.0.0/8, ::1). */
    private static boolean loopback(String address) {
        try {
            return InetAddress.getByName(IpAddresses.canonical(address)).isLoopbackAddress();
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /** Reports a bad address at {@code at}; returns whether it was bad. */
    private static boolean addressProblem(String address, String at, List<String> p) {
        String problem = IpAddresses.problem(address);
        if (problem != null) {
            p.add(at + ": " + problem);
        }
        return problem != null;
    }
}
