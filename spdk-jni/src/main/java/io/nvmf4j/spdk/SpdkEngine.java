package io.nvmf4j.spdk;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.QosLimits;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SpdkConfig;
import io.nvmf4j.config.SpdkCores;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;
import io.nvmf4j.engine.BdevIoStat;
import io.nvmf4j.engine.BdevLatency;
import io.nvmf4j.engine.BindFailures;
import io.nvmf4j.engine.ConfigDocument;
import io.nvmf4j.engine.ControllerInfo;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.EngineIoStats;
import io.nvmf4j.engine.EngineUnavailableException;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.IoNamespace;
import io.nvmf4j.engine.LiveDocument;
import io.nvmf4j.engine.MissingVolumes;
import io.nvmf4j.engine.PollGroupStat;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.engine.SubsystemStats;
import io.nvmf4j.nvme.AnaState;
import io.nvmf4j.storage.BdevException;
import io.nvmf4j.storage.StorageFile;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/**
 * The {@code spdk} engine: SPDK's NVMe-oF target (TCP and RDMA transports, malloc/null/aio bdevs) inside this
 * JVM, driven through {@link SpdkNative}. Its {@link io.nvmf4j.engine.ConfigController} owns the document: every
 * change is validated there first, then applied to SPDK here, and the document changes only when SPDK accepted it.
 * SPDK's refusals come back as {@link ControlException}s (400/404/409).
 */
public final class SpdkEngine implements Engine, EngineIoStats {
    private static final Logger LOG = LoggerFactory.getLogger(SpdkEngine.class);
    private static final String DISCOVERY_NQN = "nqn.2014-08.org.nvmexpress.discovery";

    /** The document as its control layer committed it (read-only here). */
    private final LiveDocument doc;
    /** The document as started: the start-up settings SPDK runs with (transports are created from them). */
    private final TargetConfig started;
    /** The service's state directory (SPDK's PTPL files: {@link #ptplFile}), null without one. */
    private final Path stateDir;
    /** The longest PTPL file path passed to SPDK, in bytes, less one (the native side's string buffer). */
    static final int PTPL_PATH_MAX = 256;
    /** Namespace ({@code nqn/nsid}) → the PTPL file SPDK was given for it, removed with the namespace. */
    private final Map<String, Path> ptplFiles = new HashMap<>();
    /** Namespace ({@code nqn/nsid}) → the QoS limits set on its bdev in SPDK. */
    private final Map<String, BdevQos> qosSet = new java.util.HashMap<>();
    /** Listener as configured → the address SPDK listens on (port 0 resolved at bind time). */
    private final Map<ListenerConfig, InetSocketAddress> bound = new LinkedHashMap<>();
    /**
     * Listeners whose transport cannot run here (rdma without a device) → why: kept in the document, never given
     * to SPDK, so SPDK's discovery log does not list them.
     */
    private final Map<ListenerConfig, String> failed = new LinkedHashMap<>();
    private boolean rdmaTransport;
    /**
     * Subsystem NQN and host NQN ({@link #hostId}) → the names of the host's keys in SPDK's keyring
     * ({@link #addHostToSpdk}), removed from it with the host.
     */
    private final Map<String, List<String>> hostKeyNames = new HashMap<>();
    /** The number in the next keyring key's name ({@code nvmf4j-<n>-dhchap}): names are never reused. */
    private long nextKey;
    /** Host ({@link #hostId}) → its TLS PSK file as SPDK last read it ({@link #rereadChangedPsks}). */
    private final Map<String, PskFile> pskFiles = new HashMap<>();
    private boolean closed;
    private final SpdkPools pools = new SpdkPools();
    /** What the start found missing from the pools' stores: their namespaces are not added to SPDK. */
    private final MissingVolumes missing = new MissingVolumes();
    /** The namespaces ({@code <nqn>/<nsid>}) left out of SPDK because their volume is missing. */
    private final Set<String> unserved = new HashSet<>();
    /** How often the controller lists are read to log controllers coming and going ({@link ControllerWatch}). */
    static final long CONTROLLER_POLL_MS = 500;
    private final ControllerWatch watch = new ControllerWatch();
    private ScheduledExecutorService watcher;
    /** The last {@link #busySeconds()}: SPDK's sum is over live threads, the counter must not go back. */
    private double lastBusySeconds;

    private SpdkEngine(LiveDocument doc, Path stateDir) {
        this.doc = doc;
        this.started = ConfigDocument.copy(doc.get());
        this.stateDir = stateDir;
    }

    /**
     * Validates the document, fills in identities, starts SPDK and builds the document's bdevs, subsystems,
     * listeners and referrals in it. A start that cannot succeed (SPDK unavailable, no hugepages, a core this
     * process may not use, no RDMA device for an rdma listener, SPDK refusing) throws
     * {@link EngineUnavailableException} with one message; SPDK is stopped again when it had started.
     */
    static SpdkEngine start(LiveDocument doc) throws IOException {
        return start(doc, null);
    }

    /**
     * {@link #start(LiveDocument)} with the service's state directory, where SPDK keeps the reservation of each
     * namespace whose host turned Persist Through Power Loss on ({@link #ptplFile}); null: no PTPL.
     */
    static SpdkEngine start(LiveDocument doc, Path stateDir) throws IOException {
        TargetConfig config = doc.get();
        ConfigValidator.validate(config); // names engine spdk: SpdkEngineProvider is chosen by that name
        String cause = SpdkNative.unavailabilityCause();
        if (cause != null) {
            throw new EngineUnavailableException("engine spdk cannot run here: " + cause);
        }
        if (SpdkNative.running()) {
            throw new EngineUnavailableException("engine spdk: SPDK is already running in this process");
        }
        preflight(config);
        ConfigStore.assignIdentities(config);
        SpdkConfig s = config.spdk;
        String mask = SpdkCores.toMask(SpdkCores.parse(s.coreMask));
        try {
            SpdkNative.start("nvmf4j", mask, s.memSizeMb, !s.hugepages, s.coreLocks, s.isolateCores,
                s.callTimeoutMs);
        } catch (SpdkException e) {
            throw new EngineUnavailableException("engine spdk: " + e.getMessage());
        }
        SpdkEngine engine = new SpdkEngine(doc, stateDir);
        try {
            engine.open();
        } catch (SpdkException | ControlException e) {
            engine.close();
            throw new EngineUnavailableException("engine spdk: " + e.getMessage());
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
        engine.watcher = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "nvmf4j-spdk-controllers");
            t.setDaemon(true);
            return t;
        });
        engine.watcher.scheduleWithFixedDelay(engine::pollControllersLogged, CONTROLLER_POLL_MS, CONTROLLER_POLL_MS,
            TimeUnit.MILLISECONDS);
        LOG.info("spdk engine up ({}, cores {}, {} MiB {}): {} subsystem(s), {} bdev(s)", SpdkNative.version(), mask,
            s.memSizeMb, s.hugepages ? "hugepages" : "ordinary memory (no-huge)", config.subsystems.size(),
            config.bdevs.size());
        return engine;
    }

    /** The checks that give one clear message before SPDK would fail with many. */
    static void preflight(TargetConfig config) {
        SpdkConfig s = config.spdk;
        BitSet cores = SpdkCores.parse(s.coreMask);
        BitSet allowed = allowedCpus();
        if (allowed != null) {
            BitSet outside = (BitSet) cores.clone();
            outside.andNot(allowed);
            if (!outside.isEmpty()) {
                throw new EngineUnavailableException("engine spdk: spdk.coreMask " + s.coreMask + " names core(s) "
                    + outside + " that this process may not run on (allowed: " + allowed + ")");
            }
        }
        if (s.hugepages) {
            long freeMb = hugepagesFreeMb();
            if (freeMb < s.memSizeMb) {
                throw new EngineUnavailableException("engine spdk: spdk.memSizeMb is " + s.memSizeMb + " MiB of "
                    + "hugepages but " + freeMb + " MiB are free: reserve them (echo "
                    + ((s.memSizeMb + 1) / 2 + 64) + " > /proc/sys/vm/nr_hugepages; hugetlbfs mounted, e.g. on "
                    + "/dev/hugepages) or set \"spdk\": {\"hugepages\": false}");
            }
            if (!hugetlbfsMounted()) {
                throw new EngineUnavailableException("engine spdk: hugepages are reserved but no hugetlbfs is mounted "
                    + "(mount -t hugetlbfs nodev /dev/hugepages), or set \"spdk\": {\"hugepages\": false}");
            }
        }
        // an rdma listener on a host without an RDMA device does not stop the start: it is kept as failed (see bind)
    }

    private static BitSet allowedCpus() {
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/self/status"))) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return SpdkCores.parse("[" + line.substring(line.indexOf(':') + 1).trim() + "]");
                }
            }
        } catch (IOException | IllegalArgumentException e) {
            LOG.debug("cannot read the allowed CPUs: {}", e.toString());
        }
        return null;
    }

    /** Free hugepages in MiB (0 when /proc/meminfo cannot be read). */
    static long hugepagesFreeMb() {
        long free = 0;
        long sizeKb = 2048;
        try {
            for (String line : Files.readAllLines(Paths.get("/proc/meminfo"))) {
                String[] f = line.split("\\s+");
                if (line.startsWith("HugePages_Free:")) {
                    free = Long.parseLong(f[1]);
                } else if (line.startsWith("Hugepagesize:")) {
                    sizeKb = Long.parseLong(f[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0;
        }
        return free * sizeKb / 1024;
    }

    private static boolean hugetlbfsMounted() {
        try {
            return Files.readAllLines(Paths.get("/proc/mounts")).stream().anyMatch(l -> l.split(" ").length > 2
                && l.split(" ")[2].equals("hugetlbfs"));
        } catch (IOException e) {
            return true;
        }
    }

    static boolean rdmaDevicePresent() {
        Path ib = Paths.get("/sys/class/infiniband");
        try (var s = Files.list(ib)) {
            return s.findAny().isPresent();
        } catch (IOException e) {
            return false;
        }
    }

    private void open() {
        TargetConfig config = doc.get();
        createTransport("tcp");
        for (BdevConfig b : config.bdevs) {
            createBdev(b, config.storage);
        }
        pools.open(config, missing);
        for (SubsystemConfig s : config.subsystems) {
            buildSubsystem(s);
        }
        for (ReferralConfig r : config.referrals) {
            SpdkNative.referral(true, trtype(r.transport), r.address, Integer.toString(r.port));
        }
    }

    // ------------------------------------------------------------------ SPDK steps

    private static String trtype(String transport) {
        return transport.toUpperCase(Locale.ROOT);
    }

    private void createTransport(String transport) {
        if ("rdma".equals(transport)) {
            if (rdmaTransport) {
                return;
            }
            if (!rdmaDevicePresent()) {
                throw ControlException.conflict("an rdma listener needs an RDMA device and this machine has none "
                    + "(/sys/class/infiniband is empty)");
            }
            var r = started.rdma; // created at the first rdma listener, with the options SPDK started with
            SpdkNative.createTransport("RDMA", new int[] {r.maxQueueDepth, r.maxIoQueues, r.inCapsuleDataSize,
                r.mdtsBytes, 0, started.spdk.sharedBuffers, -1});
            rdmaTransport = true;
        } else {
            var t = started.tcp;
            SpdkNative.createTransport("TCP", new int[] {t.maxQueueDepth, t.maxIoQueues, t.inCapsuleDataSize,
                t.mdtsBytes, 0, started.spdk.sharedBuffers, -1});
        }
    }

    /**
     * Creates a bdev in SPDK. A file bdev's file is opened by {@link StorageFile} as the java engine opens it (only
     * what {@code storage} allows, no symbolic link below an images directory, the descriptor's type checked),
     * created (mode 0600, in a directory that must exist) when missing and extended to {@code numBlocks} when shorter;
     * SPDK's aio bdev then opens {@code /proc/self/fd/N} of that descriptor, which reopens the very file checked
     * whatever the path names by then. The native call takes the descriptor over and closes it once SPDK is done
     * with it, also when SPDK finishes the call after it timed out here (closing it at the timeout would let the
     * number name another file by the time SPDK opens it). SPDK serves the whole file in
     * blocks of {@code blockSize} (it cannot detect a regular file's block size itself), so a file longer than
     * {@code numBlocks} is refused (the java engine would serve only its first numBlocks).
     */
    private static void createBdev(BdevConfig b, StorageConfig storage) {
        if (!"file".equals(b.type)) {
            SpdkNative.createBdev(b.type, b.name, b.numBlocks, b.blockSize, -1, bdevUuid(b.name));
            return;
        }
        SpdkNative.createBdev(b.type, b.name, b.numBlocks, b.blockSize, openFile(b, storage).release(),
            bdevUuid(b.name));
    }

    private static StorageFile openFile(BdevConfig b, StorageConfig storage) {
        Path p = Paths.get(b.path).toAbsolutePath();
        if (b.numBlocks == 0 && !Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            throw ControlException.invalid("bdev " + b.name + ": " + b.path + " does not exist; give numBlocks "
                + "to create it with a size");
        }
        StorageFile f;
        try {
            f = StorageFile.open(b.name, p, storage, b.numBlocks > 0, false);
        } catch (BdevException e) {
            throw ControlException.invalid(e.getMessage());
        }
        try {
            long want = b.numBlocks * b.blockSize;
            if (b.numBlocks > 0 && !f.blockDevice() && f.size() > want) {
                throw ControlException.invalid("bdev " + b.name + ": " + b.path + " holds " + f.size() / b.blockSize
                    + " blocks, more than numBlocks " + b.numBlocks + "; the spdk engine serves a file's whole size "
                    + "(SPDK's aio bdev), so give numBlocks 0 or " + f.size() / b.blockSize);
            }
            if (b.numBlocks > 0) {
                f.extendTo(want);
            }
            return f;
        } catch (RuntimeException e) {
            f.close();
            throw e;
        }
    }

    private void buildSubsystem(SubsystemConfig s) {
        SpdkNative.createSubsystem(s.nqn, s.serial, s.model, s.maxNamespaces, s.minCntlid, s.maxCntlid,
            s.allowAnyHost);
        for (String h : s.hosts) {
            addHostToSpdk(s.nqn, h, ConfigDocument.hostKey(s, h));
        }
        for (HostKeyConfig k : s.hostKeys) {
            if (!s.hosts.contains(k.host)) {
                addHostToSpdk(s.nqn, k.host, k); // allowAnyHost: SPDK keeps a host's keys in its host entry
            }
        }
        for (NamespaceConfig n : s.namespaces) {
            addNamespaceToSpdk(s.nqn, n);
        }
        for (ListenerConfig l : s.listeners) {
            if (bind(l)) {
                SpdkNative.addListener(s.nqn, trtype(l.transport), l.address, Integer.toString(bound.get(l).getPort()),
                    secure(l));
                setAnaStates(s.nqn, l);
            }
        }
    }

    /** Gives SPDK's listener {@code l} of {@code nqn} the states of its {@code anaStates} (SPDK starts it optimized). */
    private void setAnaStates(String nqn, ListenerConfig l) {
        if (l.anaStates != null) {
            l.anaStates.forEach((group, state) -> setAnaState(nqn, l, Integer.parseInt(group), AnaState.byName(state)));
        }
    }

    private void setAnaState(String nqn, ListenerConfig l, int group, AnaState state) {
        SpdkNative.setAnaState(nqn, trtype(l.transport), l.address, port(l), group, state.anas());
    }

    /** Whether {@code l} takes TLS only (SPDK's ssl socket); {@code optional} is refused by the validator. */
    private static boolean secure(ListenerConfig l) {
        return ListenerConfig.SECURE_REQUIRED.equals(l.secureChannelOrDefault());
    }

    private static String hostId(String nqn, String hostnqn) {
        return nqn + "\n" + hostnqn;
    }

    /**
     * Allows {@code hostnqn} on subsystem {@code nqn} in SPDK with its key files ({@code keys} null: none), as SPDK's
     * {@code keyring_file_add_key} and {@code nvmf_subsystem_add_host} RPCs would: each file becomes a key of SPDK's
     * keyring (libnvmf4j_spdk's own key-file module, which reads the file whenever SPDK uses the key, so a replaced
     * DH-HMAC-CHAP key applies to the next authentication), then the host is added with the DH-HMAC-CHAP key,
     * controller key and TLS PSK. On a failure the keys added are removed again.
     */
    private void addHostToSpdk(String nqn, String hostnqn, HostKeyConfig keys) {
        List<String> names = new ArrayList<>();
        String psk;
        try {
            String key = keys == null ? null : addKey(keys.dhchapKey, "dhchap", names);
            String ctrlKey = keys == null ? null : addKey(keys.dhchapCtrlKey, "ctrl", names);
            psk = keys == null ? null : addKey(keys.tlsKey, "psk", names);
            SpdkNative.addHost(nqn, hostnqn, key, ctrlKey, psk);
        } catch (RuntimeException e) {
            removeKeys(names);
            throw e;
        }
        if (!names.isEmpty()) {
            hostKeyNames.put(hostId(nqn, hostnqn), names);
        }
        if (psk != null) {
            Path file = Paths.get(keys.tlsKey);
            pskFiles.put(hostId(nqn, hostnqn), new PskFile(nqn, hostnqn, psk, file, PskFile.stamp(file)));
        }
    }

    /**
     * A host's TLS PSK file and what it looked like when SPDK read it: SPDK's TCP transport reads a PSK only when
     * the host is added, the java engine at every handshake; {@link #rereadChangedPsks} closes that gap.
     */
    private record PskFile(String nqn, String hostnqn, String keyName, Path path, String stamp) {
        /** Modification time, size and inode of {@code p} (the file itself, not a link), or why they are unknown. */
        static String stamp(Path p) {
            try {
                BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                return a.lastModifiedTime() + " " + a.size() + " " + a.fileKey();
            } catch (IOException e) {
                return "unreadable: " + e.getMessage();
            }
        }

        PskFile now(String stamp) {
            return new PskFile(nqn, hostnqn, keyName, path, stamp);
        }
    }

    /**
     * Has SPDK read again every TLS PSK file replaced or rewritten since it last read it (run every
     * {@link #CONTROLLER_POLL_MS}), so a rotated PSK applies to the next connection as with the java engine, at most
     * that long later. A file SPDK refuses then is logged; that host's TLS connections fail until it is right.
     */
    private synchronized void rereadChangedPsks() {
        if (closed) {
            return;
        }
        for (Map.Entry<String, PskFile> e : pskFiles.entrySet()) {
            PskFile f = e.getValue();
            String stamp = PskFile.stamp(f.path());
            if (stamp.equals(f.stamp())) {
                continue;
            }
            e.setValue(f.now(stamp));
            try {
                SpdkNative.reloadPsk(f.nqn(), f.hostnqn(), f.keyName());
                LOG.info("TLS PSK of host {} on {}: {} changed, SPDK read it again", f.hostnqn(), f.nqn(), f.path());
            } catch (SpdkException ex) {
                LOG.warn("TLS PSK of host {} on {}: {} changed and SPDK refused it: {}", f.hostnqn(), f.nqn(),
                    f.path(), ex.getMessage());
            }
        }
    }

    private String addKey(String path, String kind, List<String> names) {
        if (path == null) {
            return null;
        }
        String name = "nvmf4j-" + ++nextKey + "-" + kind;
        SpdkNative.addKey(name, path);
        names.add(name);
        return name;
    }

    /** Takes the keys of a host that SPDK no longer has out of SPDK's keyring. */
    private void removeHostKeys(String nqn, String hostnqn) {
        pskFiles.remove(hostId(nqn, hostnqn));
        removeKeys(hostKeyNames.remove(hostId(nqn, hostnqn)));
    }

    private static void removeKeys(List<String> names) {
        for (String name : names == null ? List.<String>of() : names) {
            try {
                SpdkNative.removeKey(name);
            } catch (SpdkException e) {
                LOG.warn("remove key {} from SPDK's keyring: {}", name, e.getMessage());
            }
        }
    }

    /**
     * Adds namespace {@code n} to SPDK's subsystem {@code nqn}, unless its volume is missing ({@link MissingVolumes}:
     * then it is logged and left out, and so are its QoS limits).
     */
    private void addNamespaceToSpdk(String nqn, NamespaceConfig n) {
        if (!missing.serves(nqn, n)) {
            unserved.add(nqn + "/" + n.nsid);
            return;
        }
        HexFormat hex = HexFormat.of();
        byte[] uuid = null;
        if (n.uuid != null) {
            UUID u = UUID.fromString(n.uuid);
            uuid = new byte[16];
            for (int i = 0; i < 8; i++) {
                uuid[i] = (byte) (u.getMostSignificantBits() >>> (56 - 8 * i));
                uuid[8 + i] = (byte) (u.getLeastSignificantBits() >>> (56 - 8 * i));
            }
        }
        Path ptpl = ptplFile(n);
        SpdkNative.addNamespace(nqn, n.nsid, n.bdev, n.nguid == null ? null : hex.parseHex(n.nguid), uuid,
            n.eui64 == null ? null : hex.parseHex(n.eui64), n.hosts != null, n.anaGroupOrDefault(),
            ptpl == null ? null : ptpl.toString());
        if (ptpl != null) {
            ptplFiles.put(nqn + "/" + n.nsid, ptpl);
        }
        if (n.hosts != null) {
            for (String h : n.hosts) {
                SpdkNative.namespaceHost(nqn, n.nsid, h, true);
            }
        }
        setQos(nqn, n);
    }

    /**
     * Where SPDK keeps namespace {@code n}'s reservation while a host has Persist Through Power Loss on:
     * {@code <state-dir>/spdk-reservation-<nguid>.json}, named by the NGUID (the namespace's identity, kept in the
     * document across restarts) beside the java engine's {@code reservation-<nguid>.json}, whose format differs.
     * SPDK reads it when the namespace is added (a registration saved before a restart is there again), writes it
     * on each change while PTPL is on, and reports the PTPL capability only for a namespace that has one. SPDK
     * restores it only onto a bdev with the UUID it recorded: the engine gives its bdevs a UUID derived from their
     * name ({@link #bdevUuid}). Null without a state directory or an NGUID: no PTPL.
     */
    private Path ptplFile(NamespaceConfig n) {
        if (stateDir == null || n.nguid == null) {
            return null;
        }
        Path f = stateDir.toAbsolutePath().resolve("spdk-reservation-" + n.nguid.toLowerCase(java.util.Locale.ROOT)
            + ".json");
        if (f.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8).length >= PTPL_PATH_MAX) {
            LOG.warn("namespace {} (nguid {}): no Persist Through Power Loss: the path of its reservation file {} is {}"
                + " bytes or more, longer than the spdk engine passes to SPDK", n.nsid, n.nguid, f, PTPL_PATH_MAX);
            return null;
        }
        return f;
    }

    /**
     * The UUID of the bdev named {@code name} in SPDK: the same at every start (a name-based UUID of it), so that a
     * PTPL file SPDK wrote for a namespace on it matches the bdev again after a restart.
     */
    static String bdevUuid(String name) {
        return UUID.nameUUIDFromBytes(("nvmf4j bdev " + name).getBytes(java.nio.charset.StandardCharsets.UTF_8))
            .toString();
    }

    /** Removes the PTPL file of a namespace that was removed (its registrations go with it, as on the java engine). */
    private void removePtplFile(String key) {
        Path f = ptplFiles.remove(key);
        if (f != null) {
            try {
                Files.deleteIfExists(f);
            } catch (IOException e) {
                LOG.warn("namespace {}: could not remove its reservation file {}: {}", key, f, e.toString());
            }
        }
    }

    /**
     * Sets namespace {@code n}'s own QoS limits on its bdev through SPDK's bdev QoS when they differ from what was set
     * there (the document was validated against this engine: IOPS in multiples of 1000, no per-host limits, no
     * groups). A namespace without limits clears them from its bdev if it had some.
     */
    private void setQos(String nqn, NamespaceConfig n) {
        String key = nqn + "/" + n.nsid;
        QosLimits want = n.qos == null || n.qos.isUnlimited() ? null : n.qos.limits();
        BdevQos was = qosSet.get(key);
        if (want == null && was == null
            || want != null && was != null && was.bdev.equals(n.bdev) && was.limits.sameLimits(want)) {
            return;
        }
        if (was != null && !was.bdev.equals(n.bdev)) {
            clearQos(key);
        }
        QosLimits l = want == null ? new QosLimits() : want;
        SpdkNative.bdevQos(n.bdev, QosLimits.value(l.iops), QosLimits.value(l.rwMBps), QosLimits.value(l.readMBps),
            QosLimits.value(l.writeMBps));
        if (want == null) {
            qosSet.remove(key);
        } else {
            qosSet.put(key, new BdevQos(n.bdev, want));
        }
    }

    /** Clears the QoS SPDK keeps on the bdev of namespace {@code key} (it outlives the namespace in SPDK). */
    private void clearQos(String key) {
        BdevQos was = qosSet.remove(key);
        if (was != null) {
            SpdkNative.bdevQos(was.bdev, 0, 0, 0, 0);
        }
    }

    /** The limits set on a namespace's bdev. */
    private record BdevQos(String bdev, QosLimits limits) {
    }

    /** Sets each namespace's QoS limits of {@code next} on its bdev (SPDK's bdev QoS), where they changed. */
    @Override
    public synchronized void applyQos(TargetConfig next) {
        try {
            for (SubsystemConfig s : next.subsystems) {
                for (NamespaceConfig n : s.namespaces) {
                    if (!unserved.contains(s.nqn + "/" + n.nsid)) {
                        setQos(s.nqn, n);
                    }
                }
            }
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    /**
     * Makes SPDK listen on {@code l} unless it already does (port 0: a free port picked now), with the discovery
     * subsystem on it: the discovery log then lists the current discovery subsystem (subtype 3) as the java
     * engine's does, and SPDK does not fall back to its deprecated "discovery on any listener".
     */
    private boolean bind(ListenerConfig l) {
        if (bound.containsKey(l)) {
            return true;
        }
        if (failed.containsKey(l)) {
            return false;
        }
        if ("rdma".equals(l.transport) && !rdmaDevicePresent()) {
            String cause = "rdma transport unavailable: this machine has no RDMA device (/sys/class/infiniband is empty)";
            failed.put(l, cause);
            LOG.warn("listener {} not bound, not in the discovery log (TCP carries on): {}", l, cause);
            return false;
        }
        createTransport(l.transport);
        int port = l.port;
        if (port == 0) {
            port = freePort(l.address);
        } else if ("tcp".equals(l.transport)) {
            probePort(l.address, port);
        }
        String trtype = trtype(l.transport);
        String svcid = Integer.toString(port);
        try {
            SpdkNative.listen(trtype, l.address, svcid, secure(l));
        } catch (SpdkException e) {
            throw ControlException.conflict("cannot listen on " + l + ": " + e.getMessage());
        }
        try {
            SpdkNative.addListener(DISCOVERY_NQN, trtype, l.address, svcid, secure(l));
        } catch (SpdkException e) {
            stopListening(l, port);
            throw mapped(e);
        }
        bound.put(l, new InetSocketAddress(l.address, port));
        LOG.info("listening on {} {}{}{}", l.transport, BindFailures.hostPort(l.address, port),
            l.port == 0 ? " (port 0: picked " + port + ")" : "", secure(l) ? " (TLS required)" : "");
        return true;
    }

    private static void stopListening(ListenerConfig l, int port) {
        try {
            SpdkNative.stopListen(trtype(l.transport), l.address, Integer.toString(port));
        } catch (SpdkException e) {
            LOG.warn("stop listening on {}: {}", l, e.getMessage());
        }
    }

    /** Conflict when a TCP port is taken (SPDK's own message for that is a generic failure). */
    private static void probePort(String address, int port) {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(true);
            s.bind(new InetSocketAddress(InetAddress.getByName(address), port));
        } catch (IOException e) {
            throw ControlException.conflict(BindFailures.describe(address, port, e));
        }
    }

    private static int freePort(String address) {
        try (ServerSocket s = new ServerSocket()) {
            s.bind(new InetSocketAddress(InetAddress.getByName(address), 0));
            return s.getLocalPort();
        } catch (IOException e) {
            throw ControlException.conflict("cannot find a free port on " + address + ": " + e.getMessage());
        }
    }

    private void unbindIfUnused(ListenerConfig l) {
        unbindIfUnused(doc.get(), l);
    }

    /** Stops listening on {@code l} unless a subsystem of document {@code c} lists it. */
    private void unbindIfUnused(TargetConfig c, ListenerConfig l) {
        if (!ConfigDocument.listens(c, l)) {
            unbind(l);
        }
    }

    /** Takes the discovery subsystem off {@code l} (disconnecting its hosts there) and stops listening. */
    private void unbind(ListenerConfig l) {
        failed.remove(l);
        InetSocketAddress a = bound.remove(l);
        if (a == null) {
            return;
        }
        try {
            SpdkNative.removeListener(DISCOVERY_NQN, trtype(l.transport), l.address, Integer.toString(a.getPort()));
        } catch (SpdkException e) {
            LOG.warn("remove the discovery subsystem from {}: {}", l, e.getMessage());
        }
        stopListening(l, a.getPort());
    }

    private String port(ListenerConfig l) {
        InetSocketAddress a = bound.get(l);
        return Integer.toString(a != null ? a.getPort() : l.port);
    }

    /** SPDK's refusal as the API's status: unknown → 404, exists/busy → 409, anything else → 400. */
    static ControlException mapped(SpdkException e) {
        return switch (e.errno()) {
            case 2, 19 -> ControlException.notFound(e.getMessage());         // ENOENT, ENODEV
            case 17, 16, 98, 114, 11 -> ControlException.conflict(e.getMessage()); // EEXIST, EBUSY, EADDRINUSE, EALREADY, EAGAIN
            default -> ControlException.invalid(e.getMessage());
        };
    }

    // ------------------------------------------------------------------ Engine

    @Override
    public String name() {
        return Engines.SPDK;
    }

    @Override
    public synchronized void addBdev(TargetConfig next, BdevConfig b) {
        try {
            createBdev(b, next.storage);
        } catch (SpdkException e) {
            throw ControlException.invalid(e.getMessage());
        }
    }

    @Override
    public synchronized void removeBdev(BdevConfig b) {
        try {
            SpdkNative.deleteBdev(b.type, b.name);
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    @Override
    public synchronized void growBdev(TargetConfig config, BdevConfig b, long numBlocks) {
        String name = b.name;
        if ("malloc".equals(b.type)) {
            throw ControlException.invalid("the spdk engine cannot grow malloc bdev " + name
                + " (SPDK's malloc bdev has a fixed size)");
        }
        long current = b.numBlocks;
        try {
            if ("file".equals(b.type)) {
                try (StorageFile f = StorageFile.open(name, Paths.get(b.path).toAbsolutePath(), config.storage,
                    false, false)) {
                    current = f.size() / b.blockSize;
                    if (numBlocks <= current) {
                        throw ControlException.invalid("numBlocks: " + numBlocks + " does not grow bdev " + name
                            + " (" + current + " blocks); shrinking would lose data");
                    }
                    if (f.blockDevice()) {
                        throw ControlException.invalid("bdev " + name + ": " + b.path + " is not a regular file; "
                            + "grow the device itself, SPDK rescans it");
                    }
                    f.extendTo(numBlocks * b.blockSize);
                } catch (BdevException e) {
                    throw ControlException.invalid(e.getMessage());
                }
            } else if (numBlocks <= current) {
                throw ControlException.invalid("numBlocks: " + numBlocks + " does not grow bdev " + name + " ("
                    + current + " blocks); shrinking would lose data");
            }
            SpdkNative.resizeBdev(b.type, name, numBlocks);
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    // ------------------------------------------------------------------ pools (SpdkPools)

    @Override
    public synchronized void addPool(TargetConfig next, PoolConfig p) {
        pools.addPool(p);
    }

    @Override
    public synchronized void removePool(PoolConfig p) {
        pools.removePool(p);
    }

    @Override
    public synchronized PoolInfo poolInfo(PoolConfig pool) {
        return pools.poolInfo(pool);
    }

    @Override
    public synchronized void createVolume(TargetConfig next, String pool, VolumeConfig v) {
        pools.createVolume(pool, v);
    }

    @Override
    public synchronized void resizeVolume(TargetConfig next, String pool, VolumeConfig volume, long numBlocks) {
        pools.resizeVolume(pool, volume, numBlocks);
    }

    @Override
    public synchronized void deleteVolume(String pool, String volume) {
        pools.deleteVolume(pool, volume);
    }

    @Override
    public synchronized long snapshot(String pool, List<String> volumes, String snapshot) {
        return pools.snapshot(doc.get(), pool, volumes, snapshot);
    }

    @Override
    public synchronized void cloneSnapshot(TargetConfig next, String pool, String volume, String snapshot,
                                           VolumeConfig clone) {
        pools.cloneSnapshot(pool, volume, snapshot, clone);
    }

    @Override
    public synchronized void deleteSnapshot(String pool, String volume, String snapshot) {
        pools.deleteSnapshot(pool, volume, snapshot);
    }

    @Override
    public synchronized long allocatedBytes(String pool, String volume, String snapshot) {
        return pools.allocatedBytes(pool, volume, snapshot);
    }

    @Override
    public synchronized MissingVolumes missingVolumes() {
        return missing;
    }

    /** What the start found in pool {@code pool}'s lvol store against the document, or null (added since). */
    synchronized SpdkPools.Reconciled poolReconciled(String pool) {
        return pools.reconciled(pool);
    }

    @Override
    public synchronized void addSubsystem(TargetConfig next, SubsystemConfig added) {
        List<ListenerConfig> before = new ArrayList<>(bound.keySet());
        before.addAll(failed.keySet());
        try {
            buildSubsystem(added);
        } catch (SpdkException | ControlException e) {
            try {
                SpdkNative.deleteSubsystem(added.nqn);
            } catch (SpdkException ignored) {
                // it may not have been created at all
            }
            unserved.removeIf(k -> k.startsWith(added.nqn + "/"));
            removeSubsystemKeys(added);
            for (ListenerConfig l : added.listeners) {
                if (!before.contains(l)) {
                    unbindIfUnused(l);
                }
            }
            throw e instanceof SpdkException se ? mapped(se) : (ControlException) e;
        }
    }

    @Override
    public synchronized void removeSubsystem(TargetConfig next, SubsystemConfig sc) {
        try {
            SpdkNative.deleteSubsystem(sc.nqn);
            unserved.removeIf(k -> k.startsWith(sc.nqn + "/"));
            for (NamespaceConfig n : sc.namespaces) {
                clearQos(sc.nqn + "/" + n.nsid);
                removePtplFile(sc.nqn + "/" + n.nsid);
            }
        } catch (SpdkException e) {
            throw mapped(e);
        }
        removeSubsystemKeys(sc);
        for (ListenerConfig l : sc.listeners) {
            unbindIfUnused(next, l);
        }
    }

    private void removeSubsystemKeys(SubsystemConfig s) {
        for (String h : s.hosts) {
            removeHostKeys(s.nqn, h);
        }
        for (HostKeyConfig k : s.hostKeys) {
            removeHostKeys(s.nqn, k.host);
        }
    }

    @Override
    public synchronized void setAllowAnyHost(SubsystemConfig sc, boolean allow) {
        String nqn = sc.nqn;
        try {
            SpdkNative.setAllowAnyHost(nqn, allow);
            if (!allow) {
                for (ControllerInfo c : controllers(nqn)) {
                    if (!sc.hosts.contains(c.hostnqn())) {
                        SpdkNative.disconnectHost(nqn, c.hostnqn());
                    }
                }
            }
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    @Override
    public synchronized void addNamespace(TargetConfig next, String nqn, NamespaceConfig added) {
        try {
            addNamespaceToSpdk(nqn, added);
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    /** Moves the namespace to another ANA group in SPDK; hosts get the ANA change AEN (sent by SPDK at the resume). */
    @Override
    public synchronized void setNamespaceAnaGroup(TargetConfig next, String nqn, int nsid, int group) {
        try {
            SpdkNative.namespaceAnaGroup(nqn, nsid, group);
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    @Override
    public synchronized void removeNamespace(String nqn, int nsid) {
        if (unserved.remove(nqn + "/" + nsid)) {
            return; // SPDK never had it
        }
        try {
            SpdkNative.removeNamespace(nqn, nsid);
            clearQos(nqn + "/" + nsid);
            removePtplFile(nqn + "/" + nsid);
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    /**
     * Allows a host; with {@code k} it must authenticate (DH-HMAC-CHAP) and its TLS connections use its PSK
     * (the key files are checked by the validator, then by SPDK's keyring, before anything changes). A host that
     * {@code allowAnyHost} let in with keys of its own ({@code before}) is replaced in SPDK by the new entry.
     */
    @Override
    public synchronized void addHost(String nqn, String hostnqn, HostKeyConfig k, HostKeyConfig before) {
        try {
            if (before != null) {
                SpdkNative.removeHost(nqn, hostnqn);
                removeHostKeys(nqn, hostnqn);
            }
            try {
                addHostToSpdk(nqn, hostnqn, k);
            } catch (SpdkException e) {
                if (before != null) {
                    addHostToSpdk(nqn, hostnqn, before); // as it was
                }
                throw e;
            }
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    @Override
    public synchronized void removeHost(SubsystemConfig sc, String hostnqn) {
        String nqn = sc.nqn;
        try {
            SpdkNative.removeHost(nqn, hostnqn);
            if (!sc.allowAnyHost) {
                SpdkNative.disconnectHost(nqn, hostnqn);
            }
        } catch (SpdkException e) {
            throw mapped(e);
        }
        removeHostKeys(nqn, hostnqn);
    }

    @Override
    public synchronized void setNamespaceHost(String nqn, int nsid, String hostnqn, boolean add, List<String> hosts) {
        try {
            SpdkNative.namespaceHost(nqn, nsid, hostnqn, add);
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    @Override
    public synchronized void addListener(TargetConfig next, String nqn, ListenerConfig l) {
        boolean wasBound = bound.containsKey(l) || failed.containsKey(l);
        boolean added = false;
        try {
            if (bind(l)) {
                SpdkNative.addListener(nqn, trtype(l.transport), l.address, port(l), secure(l));
                added = true;
                setAnaStates(nqn, ConfigDocument.listener(ConfigDocument.subsystem(next, nqn), l));
            }
        } catch (SpdkException | ControlException e) {
            if (added) {
                try {
                    SpdkNative.removeListener(nqn, trtype(l.transport), l.address, port(l));
                } catch (SpdkException again) {
                    e.addSuppressed(again);
                }
            }
            if (!wasBound) {
                unbind(l);
            }
            throw e instanceof SpdkException se ? mapped(se) : (ControlException) e;
        }
    }

    @Override
    public synchronized void removeListener(TargetConfig next, String nqn, ListenerConfig l) {
        if (bound.containsKey(l)) {
            try {
                SpdkNative.removeListener(nqn, trtype(l.transport), l.address, port(l));
            } catch (SpdkException e) {
                throw mapped(e);
            }
        }
        unbindIfUnused(next, l);
    }

    /** The groups of {@code nqn} through {@code configured}; the document holds each listener's states as SPDK has them. */
    @Override
    public synchronized IntFunction<String> anaStates(String nqn, ListenerConfig configured) {
        return g -> configured.anaStates == null ? AnaState.OPTIMIZED.configName()
            : configured.anaStates.getOrDefault(Integer.toString(g), AnaState.OPTIMIZED.configName());
    }

    /**
     * Sets group {@code group}'s state through {@code l} in SPDK ({@code spdk_nvmf_subsystem_set_ana_state}, which
     * sends the hosts connected through it the ANA change event) and in the listener's {@code anaStates}. A listener
     * that does not serve (an rdma listener without a device) keeps the state for when it does.
     */
    @Override
    public synchronized void setAnaState(String nqn, ListenerConfig l, int group, String state) {
        if (bound.containsKey(l)) {
            try {
                setAnaState(nqn, l, group, AnaState.byName(state));
            } catch (SpdkException e) {
                throw mapped(e);
            }
        }
        LOG.info("subsystem {}: ANA group {} is {} through listener {}", nqn, group, state, l);
    }

    @Override
    public synchronized void probeListener(ListenerConfig l) {
        if (bound.containsKey(l)) {
            return;
        }
        if ("rdma".equals(l.transport)) {
            return;  // without a device it is added as failed, as at start
        }
        if (l.port != 0) {
            probePort(l.address, l.port);
        }
    }

    @Override
    public synchronized Map<ListenerConfig, InetSocketAddress> listeners() {
        return new LinkedHashMap<>(bound);
    }

    @Override
    public synchronized Map<ListenerConfig, String> failedListeners() {
        return new LinkedHashMap<>(failed);
    }

    @Override
    public synchronized void addReferral(TargetConfig next, ReferralConfig r) {
        try {
            SpdkNative.referral(true, trtype(r.transport), r.address, Integer.toString(r.port));
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    @Override
    public synchronized void removeReferral(TargetConfig next, ReferralConfig r) {
        try {
            SpdkNative.referral(false, trtype(r.transport), r.address, Integer.toString(r.port));
        } catch (SpdkException e) {
            throw mapped(e);
        }
    }

    @Override
    public synchronized List<ControllerInfo> controllers(String nqn) {
        return live(nqn).stream().map(Listed::info).toList();
    }

    /** A controller of SPDK's list and the transport of its admin queue ({@code tcp}, {@code rdma}). */
    record Listed(ControllerInfo info, String transport) {
    }

    private List<Listed> live(String nqn) {
        boolean discovery = DISCOVERY_NQN.equals(nqn);
        if (!discovery) {
            ConfigDocument.subsystem(doc.get(), nqn);
        }
        String text;
        try {
            text = SpdkNative.controllers(nqn);
        } catch (SpdkException e) {
            throw mapped(e);
        }
        return parseControllers(text);
    }

    /**
     * SPDK's controller list as {@code nvmf4j_spdk.c}'s {@code do_controllers} writes it: one line per controller,
     * tab-separated cntlid, hostnqn (its bytes in hex, so that a host NQN holding a tab or a newline stays one
     * field), hostid (hex), the admin queue's trtype:traddr:trsvcid, kato and the I/O queues' qids.
     */
    static List<Listed> parseControllers(String text) {
        List<Listed> out = new ArrayList<>();
        HexFormat hex = HexFormat.of();
        for (String line : text.split("\n")) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            String address = hostAddress(f[3]);
            List<ControllerInfo.Queue> queues = new ArrayList<>();
            queues.add(new ControllerInfo.Queue(0, address));
            for (String qid : f[5].split(",")) {
                if (!qid.isEmpty()) {
                    queues.add(new ControllerInfo.Queue(Integer.parseInt(qid), address));
                }
            }
            int colon = f[3].indexOf(':');
            String transport = colon < 0 ? "?" : f[3].substring(0, colon).toLowerCase(Locale.ROOT);
            String hostnqn = new String(hex.parseHex(f[1]), StandardCharsets.UTF_8);
            out.add(new Listed(new ControllerInfo(Integer.parseInt(f[0]), hostnqn, hex.parseHex(f[2]), address,
                Integer.parseInt(f[4]), List.copyOf(queues)), transport));
        }
        return out;
    }

    /** What the controller watch has seen of a controller's I/O queues so far ({@link ControllerWatch}); for tests. */
    int ioQueuesSeen(String subnqn, int cntlid) {
        return watch.ioQueuesSeen(subnqn, cntlid);
    }

    private void pollControllersLogged() {
        try {
            pollControllers();
        } catch (RuntimeException e) {
            LOG.debug("reading SPDK's controller lists failed: {}", e.toString()); // a subsystem removed meanwhile
        }
        try {
            rereadChangedPsks();
        } catch (RuntimeException e) {
            LOG.warn("checking the TLS PSK files failed: {}", e.toString());
        }
    }

    /** Reads every subsystem's controllers (discovery included) and logs the changes since the last poll. */
    private void pollControllers() {
        List<ControllerWatch.Live> now = new ArrayList<>();
        synchronized (this) {
            if (closed) {
                return;
            }
            List<String> nqns = new ArrayList<>();
            nqns.add(DISCOVERY_NQN);
            doc.get().subsystems.forEach(s -> nqns.add(s.nqn));
            for (String nqn : nqns) {
                for (Listed l : live(nqn)) {
                    ControllerInfo c = l.info();
                    now.add(new ControllerWatch.Live(nqn, c.cntlid(), c.hostnqn(), c.address(), l.transport(), c.kato(),
                        c.queues().size() - 1));
                }
            }
        }
        watch.poll(now, System.nanoTime());
    }

    /**
     * SPDK's {@code TCP:10.0.0.1:45678} as the java engine prints a peer ({@code 10.0.0.1:45678}; IPv6 in brackets,
     * {@code [::1]:45678}).
     */
    static String hostAddress(String trid) {
        int first = trid.indexOf(':');
        int last = trid.lastIndexOf(':');
        if (first < 0 || last == first) {
            return first < 0 ? trid : trid.substring(first + 1);
        }
        String addr = trid.substring(first + 1, last);
        return (addr.contains(":") ? "[" + addr + "]" : addr) + trid.substring(last);
    }

    @Override
    public synchronized List<SubsystemStats> subsystemStats() {
        TargetConfig config = doc.get();
        List<SubsystemStats> out = new ArrayList<>();
        List<String> nqns = new ArrayList<>();
        nqns.add(DISCOVERY_NQN);
        config.subsystems.forEach(s -> nqns.add(s.nqn));
        for (String nqn : nqns) {
            List<ControllerInfo> ctrls = controllers(nqn);
            int queues = ctrls.stream().mapToInt(c -> c.queues().size()).sum();
            int namespaces = nqn.equals(nqns.get(0)) ? 0
                : ConfigDocument.subsystem(config, nqn).namespaces.size();
            out.add(new SubsystemStats(nqn, ctrls.size(), queues, namespaces));
        }
        return out;
    }

    /** SPDK's threads' busy ticks ({@code spdk_thread_get_stats}) over the tick rate, never below the last value. */
    @Override
    public synchronized double busySeconds() {
        String[] f = SpdkNative.threadStats().trim().split("\t");
        long busy = Long.parseLong(f[0]);
        long hz = Math.max(1, Long.parseLong(f[2]));
        lastBusySeconds = Math.max(lastBusySeconds, (double) busy / hz);
        return lastBusySeconds;
    }

    @Override
    public String subsystemOf(IoNamespace ns) {
        return null; // no per-I/O observer: SPDK's I/O statistics are read by bdevIoStats()
    }

    @Override
    public EngineIoStats ownIoStats() {
        return this;
    }

    /** SPDK's per-bdev I/O statistics, by bdev name and by each alias (an lvol's {@code <store>/<lvol>}). */
    @Override
    public synchronized Map<String, BdevIoStat> bdevIoStats() {
        Map<String, BdevIoStat> out = new LinkedHashMap<>();
        for (String line : SpdkNative.bdevStats().split("\n")) {
            if (!line.isEmpty()) {
                BdevIoStat s = StatLines.bdevIoStat(line);
                out.put(s.name(), s);
            }
        }
        return out;
    }

    /**
     * SPDK's latency histogram of bdev {@code bdev} (the namespace's: counted since the namespace was added), or
     * of every bdev with one, by name and by each alias, when {@code bdev} is null.
     */
    @Override
    public synchronized Map<String, BdevLatency> bdevLatency(String bdev) {
        Map<String, BdevLatency> out = new LinkedHashMap<>();
        for (String line : SpdkNative.bdevLatency(bdev).split("\n")) {
            if (!line.isEmpty()) {
                BdevLatency l = StatLines.bdevLatency(line);
                out.put(l.bdev(), l);
            }
        }
        return out;
    }

    /** SPDK's poll-group statistics, summed over the poll groups. */
    @Override
    public synchronized PollGroupStat pollGroupStat() {
        return StatLines.pollGroupStat(SpdkNative.pollGroupStats().trim());
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (watcher != null) {
            watcher.shutdownNow();
        }
        watch.closeAll("target shutting down", System.nanoTime());
        int rc = SpdkNative.stop();
        LOG.info("spdk engine stopped (SPDK's exit status {})", rc);
    }
}
