package io.nvmf4j.service.state;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigJournal;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.LogText;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.QosConfig;
import io.nvmf4j.config.QosGroupConfig;
import io.nvmf4j.config.QosLimits;
import io.nvmf4j.config.RdmaTransportConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.TcpTransportConfig;
import io.nvmf4j.engine.AnaGroupInfo;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.ControllerInfo;
import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.engine.ListenerState;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.engine.SnapshotInfo;
import io.nvmf4j.engine.SnapshotTaken;
import io.nvmf4j.engine.VolumeInfo;
import io.nvmf4j.engine.VolumeRequest;
import io.nvmf4j.nvme.AnaLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * The REST-facing face of the {@link ConfigController}: every change runs on a single thread (so changes are
 * serialised and never run on a Vert.x event loop) as one {@link ConfigController#commit}, which applies it and
 * makes the document durable (a journal record forced to disk, {@link ConfigJournal}) before the returned future
 * completes (a write that fails undoes the change, and
 * the future fails with {@link PersistenceException}). Here: the labels that make a refusal name the request's
 * fields, the API's own refusals, the entity tag and the redaction. After every acknowledged change the file with its
 * journal ({@link ConfigStore#load}) equals the engine's document.
 */
public final class ConfigService implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConfigService.class);
    private static final ObjectMapper MAPPER = ConfigStore.mapper();

    /** Writes the document; {@link ConfigStore#save} in production, a failing one in tests. */
    @FunctionalInterface
    public interface Saver {
        void save(Path file, TargetConfig config) throws IOException;
    }

    @FunctionalInterface
    interface Change<T> {
        T apply(ConfigController<?> target);
    }

    private final ConfigController<?> target;
    private final Path file;
    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "nvmf4j-config");
        t.setDaemon(true);
        return t;
    });

    /**
     * Keeps the document in {@code file} and its journal ({@link ConfigJournal}): each change appends a record of
     * what it changed, forced to the device before the change is acknowledged; the document is written whole when
     * the journal outgrows it.
     */
    public ConfigService(ConfigController<?> target, Path file) throws IOException {
        this(target, file, ConfigJournal.open(file, target.config())::save);
    }


    public ConfigService(ConfigController<?> target, Path file, Saver saver) {
        this.target = target;
        this.file = file;
        target.persistTo(file, saver::save);
    }

    // ------------------------------------------------------------------ reads (any thread; may block briefly)

    /** A deep copy of the live document. */
    public TargetConfig snapshot() {
        return target.configSnapshot();
    }

    /** "nqn/nsid" of the namespace bdev {@code name} backs, or null. */
    public String usedBy(String name) {
        return target.namespaceOn(name);
    }

    public List<ControllerInfo> controllers(String nqn) {
        return target.controllers(nqn);
    }

    /** The persistent reservation of a namespace, read-only (hosts change it with the reservation commands). */
    public io.nvmf4j.engine.ReservationInfo reservation(String nqn, int nsid) {
        return target.reservation(nqn, nsid);
    }

    /** The document as the engine started: its start-up settings are the ones in effect. */
    public TargetConfig startedWith() {
        return target.startedWith();
    }

    /** The start-up settings that apply only at the next start. */
    public static final List<String> STARTUP_SETTINGS =
        List.of("engine", "cores", "pollGroupCores", "idleStrategy", "socketIo", "tcp", "rdma", "spdk", "api", "metrics");

    /**
     * The start-up settings of {@code stored} that differ from the ones in effect ({@link #startedWith()}), as
     * field paths ({@code cores}, {@code tcp.maxQueueDepth}): what waits for the next start.
     */
    public List<String> restartFields(TargetConfig stored) {
        JsonNode live = MAPPER.valueToTree(target.startedWith());
        JsonNode next = MAPPER.valueToTree(stored);
        List<String> out = new ArrayList<>();
        for (String name : STARTUP_SETTINGS) {
            diff(name, live.path(name), next.path(name), out);
        }
        return out;
    }

    private static void diff(String path, JsonNode live, JsonNode next, List<String> out) {
        if (live.isObject() && next.isObject()) {
            Set<String> names = new TreeSet<>();
            live.fieldNames().forEachRemaining(names::add);
            next.fieldNames().forEachRemaining(names::add);
            for (String n : names) {
                diff(path + "." + n, live.path(n), next.path(n), out);
            }
        } else if (!live.equals(next)) {
            out.add(path);
        }
    }

    /**
     * The entity tag of a document (RFC 9110 8.8.3): a strong tag, quoted, from a SHA-256 of its canonical JSON;
     * any change of the document as the API shows it ({@link #redacted}) changes it. The hash is of the redacted
     * document, so it tells nothing about a secret either.
     */
    public static String etag(TargetConfig c) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256")
                .digest(ConfigStore.toJson(redacted(c)).getBytes(StandardCharsets.UTF_8));
            return "\"" + HexFormat.of().formatHex(d, 0, 16) + "\"";
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * The document as it may leave the service: a copy without {@code api.token}. No secret leaves through the API
     * (nor, therefore, through {@code nvmfctl config export}); an import without a token keeps the current one.
     */
    public static TargetConfig redacted(TargetConfig c) {
        TargetConfig out = copy(c, TargetConfig.class);
        if (out != null && out.api != null) {
            out.api.token = null;
        }
        return out;
    }

    /**
     * What an import keeps from the live document {@code have}: its {@code api.token} when the import gives none
     * (an exported document has none), and its {@code storage} section when the import leaves it out. A different
     * storage section is refused: where bdevs may live is the operator's to set in the file, not the API's; so are
     * different pools.
     */
    static void keepServiceSettings(TargetConfig have, TargetConfig want) {
        if (want.api != null && want.api.token == null && have.api != null) {
            want.api.token = have.api.token;
        }
        if (want.storage == null) {
            want.storage = copy(have.storage, StorageConfig.class);
        } else if (!want.storage.equals(have.storage)) {
            throw ControlException.invalid("storage: the API cannot change where bdevs may live (fileDirectories, "
                + "blockDevices); edit the configuration file and restart the service");
        }
        // pools, volumes and snapshots are files their own calls make and remove (with their lineage and crash rules)
        String pools = ConfigStore.toJson(poolsOnly(have));
        if (!pools.equals(ConfigStore.toJson(poolsOnly(want)))) {
            throw ControlException.invalid("pools: an import cannot change pools, volumes or snapshots; create and"
                + " delete them with the pool, volume and snapshot calls (leave pools as exported)");
        }
    }

    /** A document holding only {@code c}'s pools, to compare them. */
    private static TargetConfig poolsOnly(TargetConfig c) {
        TargetConfig only = new TargetConfig();
        only.pools = c.pools == null ? new ArrayList<>() : c.pools;
        return only;
    }

    /** A conditional change whose precondition (If-Match) did not hold: nothing was changed (HTTP 412). */
    public static final class PreconditionFailedException extends RuntimeException {
        private final String current;

        PreconditionFailedException(String message, String current) {
            super(message, null, false, false);
            this.current = current;
        }

        /** The document's entity tag now. */
        public String current() {
            return current;
        }
    }

    /** Every configured listener with whether it serves (bound port) or why not (see {@link ConfigController#listenerStates}). */
    public Map<ListenerConfig, ListenerState> listenerStates() {
        return target.listenerStates();
    }

    // ------------------------------------------------------------------ changes

    public CompletableFuture<BdevConfig> addBdev(BdevConfig b) {
        return submit("add bdev " + nameOf(b), t -> {
            return copy(labeled("bdevs[" + t.config().bdevs.size() + "]", () -> t.addBdev(b)), BdevConfig.class);
        });
    }

    /**
     * Starts an injection on error bdev {@code name} and answers the active ones. Runtime state of the target,
     * not a change of the document: nothing is saved, a restart starts clean.
     */
    public CompletableFuture<List<ErrorInjection>> injectError(String name, ErrorInjection injection) {
        return onThread(() -> {
            target.injectError(name, injection);
            return target.errorInjections(name);
        });
    }

    /** Stops every injection of error bdev {@code name}. */
    public CompletableFuture<Void> clearErrors(String name) {
        return onThread(() -> {
            target.clearErrors(name);
            return null;
        });
    }

    /** The active injections of error bdev {@code name}. */
    public List<ErrorInjection> errorInjections(String name) {
        return target.errorInjections(name); // a read: the engine's own lock suffices
    }

    private <T> CompletableFuture<T> onThread(java.util.function.Supplier<T> work) {
        return CompletableFuture.supplyAsync(work, thread);
    }

    public CompletableFuture<Void> removeBdev(String name) {
        return submit("remove bdev " + name, t -> {
            t.removeBdev(name);
            return null;
        });
    }

    /**
     * Grows a bdev, after the checks that need no engine call. Growth cannot be undone, so the controller writes
     * this one change ahead ({@link ConfigController#growBdev}).
     */
    public CompletableFuture<BdevConfig> growBdev(String name, long numBlocks) {
        return submit("grow bdev " + name + " to " + numBlocks + " blocks", t -> {
            TargetConfig before = t.configSnapshot();
            BdevConfig b = before.bdev(name);
            if (b == null) {
                throw ControlException.notFound("no bdev " + name);
            }
            if (numBlocks <= b.numBlocks) {
                throw ControlException.invalid("numBlocks: " + numBlocks + " does not grow bdev " + name + " ("
                    + b.numBlocks + " blocks); shrinking would lose data");
            }
            if ("malloc".equals(b.type)) {
                throw ControlException.invalid("numBlocks: malloc bdev " + name
                    + " cannot grow in place; add a new bdev instead");
            }
            TargetConfig next = copy(before, TargetConfig.class);
            next.bdev(name).numBlocks = numBlocks;
            labeled("bdevs[" + before.bdevs.indexOf(b) + "]", () -> {
                ConfigValidator.validate(next);
                return null;
            });
            t.growBdev(name, numBlocks);
            return copy(t.config().bdev(name), BdevConfig.class);
        });
    }

    // pools, volumes, snapshots: reads take the engine's lock (any thread), changes are one commit each

    public List<PoolInfo> pools() {
        return target.pools();
    }

    public PoolInfo pool(String name) {
        return target.pool(name);
    }

    public List<VolumeInfo> volumes(String pool) {
        return target.volumes(pool);
    }

    public VolumeInfo volume(String pool, String name) {
        return target.volume(pool, name);
    }

    public List<SnapshotInfo> snapshots(String pool, String volume) {
        return target.snapshots(pool, volume);
    }

    /** Adds an empty pool; document problems name the fields of {@code p} ({@code path}, {@code warnPercent}). */
    public CompletableFuture<PoolInfo> addPool(PoolConfig p) {
        return submit("add pool " + (p == null ? null : p.name), t ->
            labeled("pools[" + t.config().pools.size() + "]", () -> t.addPool(p)));
    }

    public CompletableFuture<Void> removePool(String name) {
        return submit("remove pool " + name, t -> {
            t.removePool(name);
            return null;
        });
    }

    public CompletableFuture<VolumeInfo> createVolume(String pool, VolumeRequest r) {
        return submit("create volume " + (r == null ? null : r.name()) + " in pool " + pool,
            t -> t.createVolume(pool, r));
    }

    public CompletableFuture<VolumeInfo> resizeVolume(String pool, String name, BigInteger size) {
        return submit("resize volume " + name + " of pool " + pool + " to " + size + " bytes",
            t -> t.resizeVolume(pool, name, size));
    }

    public CompletableFuture<Void> deleteVolume(String pool, String name) {
        return submit("delete volume " + name + " of pool " + pool, t -> {
            t.deleteVolume(pool, name);
            return null;
        });
    }

    public CompletableFuture<SnapshotTaken> createSnapshot(String pool, String volume, String name) {
        return submit("snapshot " + name + " of volume " + volume + " in pool " + pool,
            t -> t.createSnapshot(pool, volume, name));
    }

    public CompletableFuture<SnapshotTaken> createGroupSnapshot(String pool, List<String> volumes, String name) {
        return submit("group snapshot " + name + " of " + volumes + " in pool " + pool,
            t -> t.createGroupSnapshot(pool, volumes, name));
    }

    public CompletableFuture<VolumeInfo> cloneSnapshot(String pool, String volume, String snapshot, String clone) {
        return submit("clone " + volume + "@" + snapshot + " as " + clone + " in pool " + pool,
            t -> t.cloneSnapshot(pool, volume, snapshot, clone));
    }

    public CompletableFuture<Void> deleteSnapshot(String pool, String volume, String snapshot) {
        return submit("delete snapshot " + volume + "@" + snapshot + " in pool " + pool, t -> {
            t.deleteSnapshot(pool, volume, snapshot);
            return null;
        });
    }

    public CompletableFuture<SubsystemConfig> addSubsystem(SubsystemConfig s) {
        return submit("add subsystem " + (s == null ? null : s.nqn), t -> {
            return copy(labeled("subsystems[" + t.config().subsystems.size() + "]",
                () -> t.addSubsystem(s)), SubsystemConfig.class);
        });
    }

    public CompletableFuture<Void> removeSubsystem(String nqn) {
        return submit("remove subsystem " + nqn, t -> {
            t.removeSubsystem(nqn);
            return null;
        });
    }

    public CompletableFuture<SubsystemConfig> setAllowAnyHost(String nqn, boolean allow) {
        return submit("set allowAnyHost=" + allow + " on " + nqn, t -> {
            t.setAllowAnyHost(nqn, allow);
            return copy(find(t.config(), nqn), SubsystemConfig.class);
        });
    }

    public CompletableFuture<NamespaceConfig> addNamespace(String nqn, NamespaceConfig n) {
        return submit("add namespace to " + nqn, t -> {
            return copy(labeled(fragmentAt(t, nqn, "namespaces"), () -> t.addNamespace(nqn, n)),
                NamespaceConfig.class);
        });
    }

    public CompletableFuture<Void> removeNamespace(String nqn, int nsid) {
        return submit("remove namespace " + nsid + " from " + nqn, t -> {
            t.removeNamespace(nqn, nsid);
            return null;
        });
    }

    public CompletableFuture<String> addHost(String nqn, String hostnqn) {
        return addHost(nqn, hostnqn, null);
    }

    /** Allows a host; with {@code keys} (DH-HMAC-CHAP key files) it must authenticate. */
    public CompletableFuture<String> addHost(String nqn, String hostnqn, HostKeyConfig keys) {
        return submit("allow host " + hostnqn + " on " + nqn + (keys == null ? "" : " with DH-HMAC-CHAP keys"), t -> {
            labeled(fragmentAt(t, nqn, "hosts"), "nqn", () -> {
                t.addHost(nqn, hostnqn, keys);
                return null;
            });
            return hostnqn;
        });
    }

    public CompletableFuture<Void> removeHost(String nqn, String hostnqn) {
        return submit("disallow host " + hostnqn + " on " + nqn, t -> {
            t.removeHost(nqn, hostnqn);
            return null;
        });
    }

    /** Makes masked namespace {@code nsid} visible to {@code hostnqn} (per-host masking). */
    public CompletableFuture<String> addNamespaceHost(String nqn, int nsid, String hostnqn) {
        return submit("show namespace " + nsid + " of " + nqn + " to host " + hostnqn, t -> {
            labeled(namespaceHostAt(t, nqn, nsid), "nqn", () -> {
                t.addNamespaceHost(nqn, nsid, hostnqn);
                return null;
            });
            return hostnqn;
        });
    }

    /** Masks namespace {@code nsid} from {@code hostnqn}. */
    public CompletableFuture<Void> removeNamespaceHost(String nqn, int nsid, String hostnqn) {
        return submit("mask namespace " + nsid + " of " + nqn + " from host " + hostnqn, t -> {
            t.removeNamespaceHost(nqn, nsid, hostnqn);
            return null;
        });
    }

    /** Moves namespace {@code nsid} of {@code nqn} to ANA group {@code group} while it serves. */
    public CompletableFuture<NamespaceConfig> setNamespaceAnaGroup(String nqn, int nsid, int group) {
        return submit("move namespace " + nsid + " of " + nqn + " to ANA group " + group, t ->
            copy(labeled(namespaceAt(t, nqn, nsid, ""), () -> t.setNamespaceAnaGroup(nqn, nsid, group)),
                NamespaceConfig.class));
    }

    // QoS: each change is one commit; a refusal names the field of the body

    /** Sets the QoS limits of a namespace (its per-host limits stay). */
    public CompletableFuture<QosConfig> setNamespaceQos(String nqn, int nsid, QosLimits limits) {
        return submit("set the QoS of namespace " + nsid + " of " + nqn, t -> copy(labeled(
            namespaceAt(t, nqn, nsid, "") + ".qos", () -> t.setNamespaceQos(nqn, nsid, limits)), QosConfig.class));
    }

    public CompletableFuture<Void> removeNamespaceQos(String nqn, int nsid) {
        return submit("remove the QoS of namespace " + nsid + " of " + nqn, t -> {
            t.removeNamespaceQos(nqn, nsid);
            return null;
        });
    }

    /** Sets the limits of one host on a namespace. */
    public CompletableFuture<QosLimits> setNamespaceHostQos(String nqn, int nsid, String hostnqn, QosLimits limits) {
        return submit("set the QoS of host " + hostnqn + " on namespace " + nsid + " of " + nqn, t -> {
            NamespaceConfig n = namespaceOf(t, nqn, nsid);
            String at = namespaceAt(t, nqn, nsid, "") + ".qos.hosts[" + hostIndex(n == null ? null : n.qos, hostnqn)
                + "]";
            return copy(hostLabeled(at, () -> t.setNamespaceHostQos(nqn, nsid, hostnqn, limits)), QosLimits.class);
        });
    }

    public CompletableFuture<Void> removeNamespaceHostQos(String nqn, int nsid, String hostnqn) {
        return submit("remove the QoS of host " + hostnqn + " on namespace " + nsid + " of " + nqn, t -> {
            t.removeNamespaceHostQos(nqn, nsid, hostnqn);
            return null;
        });
    }

    /** Sets the limits of one host over all namespaces of a subsystem. */
    public CompletableFuture<QosLimits> setSubsystemHostQos(String nqn, String hostnqn, QosLimits limits) {
        return submit("set the QoS of host " + hostnqn + " on " + nqn, t -> {
            TargetConfig c = t.configSnapshot();
            SubsystemConfig s = find(c, nqn);
            String at = "subsystems[" + c.subsystems.indexOf(s) + "].qos.hosts["
                + hostIndex(s == null ? null : s.qos, hostnqn) + "]";
            return copy(hostLabeled(at, () -> t.setSubsystemHostQos(nqn, hostnqn, limits)), QosLimits.class);
        });
    }

    public CompletableFuture<Void> removeSubsystemHostQos(String nqn, String hostnqn) {
        return submit("remove the QoS of host " + hostnqn + " on " + nqn, t -> {
            t.removeSubsystemHostQos(nqn, hostnqn);
            return null;
        });
    }

    /** Creates a QoS group. */
    public CompletableFuture<QosGroupConfig> addQosGroup(QosGroupConfig g) {
        return submit("add QoS group " + g.name, t -> copy(labeled("qosGroups[" + t.configSnapshot().qosGroups.size()
            + "]", () -> t.addQosGroup(g)), QosGroupConfig.class));
    }

    /** Replaces a QoS group. */
    public CompletableFuture<QosGroupConfig> setQosGroup(QosGroupConfig g) {
        return submit("set QoS group " + g.name, t -> {
            TargetConfig c = t.configSnapshot();
            int at = c.qosGroups.indexOf(c.qosGroup(g.name));
            return copy(labeled("qosGroups[" + at + "]", () -> t.setQosGroup(g)), QosGroupConfig.class);
        });
    }

    public CompletableFuture<Void> removeQosGroup(String name) {
        return submit("remove QoS group " + name, t -> {
            t.removeQosGroup(name);
            return null;
        });
    }

    /** Where host {@code hostnqn}'s entry of {@code q} lands once set (replaced entries go last). */
    private static int hostIndex(QosConfig q, String hostnqn) {
        if (q == null || q.hosts == null) {
            return 0;
        }
        return q.hosts.size() - (q.host(hostnqn) != null ? 1 : 0);
    }

    /** A host's limits at {@code at}: "iops: ..." for its limits, "hostnqn: ..." for its NQN. */
    private static <T> T hostLabeled(String at, java.util.function.Supplier<T> call) {
        try {
            return labeled(at + ".limits", call);
        } catch (ConfigException e) {
            throw new ConfigException(e.problems().stream()
                .map(p -> p.startsWith(at + ".hostNqn") ? "hostnqn" + p.substring((at + ".hostNqn").length()) : p)
                .toList());
        }
    }

    private static NamespaceConfig namespaceOf(ConfigController<?> t, String nqn, int nsid) {
        SubsystemConfig s = find(t.configSnapshot(), nqn);
        return s == null ? null : s.namespaces.stream().filter(n -> n.nsid == nsid).findFirst().orElse(null);
    }

    /** Where the next host of namespace {@code nsid} of {@code nqn} lands in the document. */
    private static String namespaceHostAt(ConfigController<?> t, String nqn, int nsid) {
        return namespaceAt(t, nqn, nsid, "hosts");
    }

    /** Namespace {@code nsid} of {@code nqn} in the document, or (with {@code list}) the next entry of that list. */
    private static String namespaceAt(ConfigController<?> t, String nqn, int nsid, String list) {
        List<SubsystemConfig> all = t.config().subsystems;
        for (int i = 0; i < all.size(); i++) {
            List<NamespaceConfig> ns = all.get(i).namespaces;
            for (int j = 0; all.get(i).nqn.equals(nqn) && j < ns.size(); j++) {
                if (ns.get(j).nsid == nsid) {
                    String at = "subsystems[" + i + "].namespaces[" + j + "]";
                    int k = ns.get(j).hosts == null ? 0 : ns.get(j).hosts.size();
                    return list.isEmpty() ? at : at + "." + list + "[" + k + "]";
                }
            }
        }
        return "subsystems[?]";
    }

    public CompletableFuture<ListenerConfig> addListener(String nqn, ListenerConfig l) {
        return submit("add listener " + l + " to " + nqn, t -> {
            labeled(fragmentAt(t, nqn, "listeners"), () -> {
                t.addListener(nqn, l);
                return null;
            });
            ListenerState state = t.listenerStates().get(l);
            if (state != null && state.listening()) {
                LOG.info("listener {} of {}: listening on port {}", l, nqn, state.boundPort());
            } else if (state != null) {
                LOG.warn("listener {} of {}: kept but not serving (not in the discovery log): {}", l, nqn,
                    state.cause());
            }
            return l;
        });
    }

    /** The ANA groups of subsystem {@code nqn} through listener {@code l}, with their states. */
    public List<AnaGroupInfo> anaGroups(String nqn, ListenerConfig l) {
        return target.anaGroups(nqn, l); // a read: the engine's own lock suffices
    }

    /**
     * Sets ANA group {@code group}'s state through listener {@code l} of {@code nqn}; hosts connected through it get
     * the ANA change event. Through the API a group must hold a namespace (a state for an empty group is refused as
     * an unknown group; a document may name one ahead).
     */
    public CompletableFuture<AnaGroupInfo> setAnaState(String nqn, ListenerConfig l, int group, String state) {
        return submit("set ANA group " + group + " of " + nqn + " through " + l + " to " + state, t -> {
            AnaGroupInfo before = null;
            for (AnaGroupInfo g : t.anaGroups(nqn, l)) {
                before = g.group() == group && !g.nsids().isEmpty() ? g : before;
            }
            if (before == null && group >= 1 && group <= AnaLog.GROUPS_MAX) {
                throw ControlException.invalid("group: no namespace of " + nqn + " is in ANA group " + group);
            }
            t.setAnaState(nqn, l, group, state);
            return t.anaGroups(nqn, l).stream().filter(g -> g.group() == group).findFirst().orElseThrow();
        });
    }

    public CompletableFuture<Void> removeListener(String nqn, ListenerConfig l) {
        return submit("remove listener " + l + " from " + nqn, t -> {
            t.removeListener(nqn, l);
            return null;
        });
    }

    /** Gives a host a TLS PSK for the discovery subsystem (its key file checked first). */
    public CompletableFuture<HostKeyConfig> addDiscoveryHost(HostKeyConfig keys) {
        return submit("add discovery TLS PSK of host " + keys.host, t -> {
            TargetConfig c = t.configSnapshot();
            String at = "discovery.hostKeys[" + (c.discovery == null ? 0 : c.discovery.hostKeys.size()) + "]";
            labeled(at, () -> labeled(at + ".host", "nqn", () -> {
                t.addDiscoveryHostKey(keys);
                return null;
            }));
            return keys;
        });
    }

    /** Takes a host's TLS PSK off the discovery subsystem. */
    public CompletableFuture<Void> removeDiscoveryHost(String hostnqn) {
        return submit("remove discovery TLS PSK of host " + hostnqn, t -> {
            t.removeDiscoveryHostKey(hostnqn);
            return null;
        });
    }

    public CompletableFuture<ReferralConfig> addReferral(ReferralConfig r) {
        return submit("add referral " + r, t -> {
            labeled("referrals[" + t.config().referrals.size() + "]", () -> {
                t.addReferral(r);
                return null;
            });
            return r;
        });
    }

    public CompletableFuture<Void> removeReferral(ReferralConfig r) {
        return submit("remove referral " + r, t -> {
            t.removeReferral(r);
            return null;
        });
    }

    /** Stores the TCP transport options; they take effect at the next start. Answers the stored document. */
    public CompletableFuture<TargetConfig> setTcpOptions(TcpTransportConfig tcp) {
        return storeStartupSettings("store tcp transport options", "tcp", next -> next.tcp = tcp);
    }

    /** Stores the RDMA transport options; they take effect at the next start. Answers the stored document. */
    public CompletableFuture<TargetConfig> setRdmaOptions(RdmaTransportConfig rdma) {
        return storeStartupSettings("store rdma transport options", "rdma", next -> next.rdma = rdma);
    }

    private CompletableFuture<TargetConfig> storeStartupSettings(String what, String label,
                                                                 Consumer<TargetConfig> change) {
        return submit(what, t -> {
            TargetConfig next = copy(t.configSnapshot(), TargetConfig.class);
            labeled(label, () -> {
                change.accept(next);
                t.setStartupSettings(next);
                return null;
            });
            return t.configSnapshot();
        });
    }

    /**
     * Replaces the whole document: validated first, then applied as a diff (see {@link ConfigImport}); if
     * any step fails every step done so far is undone. Answers the document as now live.
     */
    public CompletableFuture<TargetConfig> importConfig(TargetConfig wanted) {
        return importConfig(wanted, etag -> true);
    }

    /**
     * As {@link #importConfig(TargetConfig)}, only when {@code ifMatch} accepts the entity tag ({@link #etag}) of
     * the document as it is when the change runs (checked on the change thread, so no other change slips in
     * between); otherwise nothing changes and the future fails with {@link PreconditionFailedException}.
     */
    public CompletableFuture<TargetConfig> importConfig(TargetConfig wanted, Predicate<String> ifMatch) {
        return submit("import a configuration document", t -> {
            String current = etag(t.configSnapshot());
            if (!ifMatch.test(current)) {
                throw new PreconditionFailedException("If-Match: the document has changed; its ETag is now "
                    + current + " (GET it again, then retry)", current);
            }
            TargetConfig next = copy(wanted, TargetConfig.class);
            keepServiceSettings(t.configSnapshot(), next);
            ConfigValidator.validate(next);
            ConfigImport.apply(t, next);
            return t.configSnapshot();
        });
    }

    // ------------------------------------------------------------------ machinery

    /** One change, committed by the controller (applied, written, undone when the write fails). */
    private <T> CompletableFuture<T> submit(String what, Change<T> change) {
        return submitRaw(what, () -> target.commit(() -> change.apply(target)));
    }

    private <T> CompletableFuture<T> submitRaw(String what, java.util.concurrent.Callable<T> work) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                T result = work.call();
                LOG.info("{}: done, saved to {}", LogText.escape(what), file);
                return result;
            } catch (RuntimeException e) {
                LOG.info("{}: refused: {}", LogText.escape(what), LogText.escape(e.getMessage()));
                throw e;
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, thread);
    }

    /**
     * Runs a change that carries one fragment of the document (a listener, a namespace...) that lands at
     * {@code at}: validation problems then name the fields of the request ({@code port}), not the document's
     * path ({@code subsystems[1].listeners[6].port}).
     */
    private static <T> T labeled(String at, java.util.function.Supplier<T> call) {
        return labeled(at, "body", call);
    }

    private static <T> T labeled(String at, String whole, java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (ConfigException e) {
            throw e.relabeled(at, whole);
        }
    }

    /** Where the next entry of list {@code list} of subsystem {@code nqn} lands in the document. */
    private static String fragmentAt(ConfigController<?> t, String nqn, String list) {
        List<SubsystemConfig> all = t.config().subsystems;
        for (int i = 0; i < all.size(); i++) {
            SubsystemConfig s = all.get(i);
            if (s.nqn.equals(nqn)) {
                int size = switch (list) {
                    case "namespaces" -> s.namespaces.size();
                    case "hosts" -> s.hosts.size();
                    default -> s.listeners.size();
                };
                return "subsystems[" + i + "]." + list + "[" + size + "]";
            }
        }
        return "subsystems[?]";
    }

    private static SubsystemConfig find(TargetConfig c, String nqn) {
        for (SubsystemConfig s : c.subsystems) {
            if (s.nqn.equals(nqn)) {
                return s;
            }
        }
        throw ControlException.notFound("no subsystem " + nqn);
    }

    private static String nameOf(BdevConfig b) {
        return b == null ? null : b.name;
    }

    static <T> T copy(T value, Class<T> type) {
        return value == null ? null : MAPPER.convertValue(value, type);
    }

    /** Waits for the change in progress (if any) and stops accepting new ones. */
    @Override
    public void close() {
        thread.shutdown();
        try {
            if (!thread.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("a configuration change was still running after 10 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
