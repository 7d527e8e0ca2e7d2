package io.nvmf4j.javaengine;

import io.nvmf4j.ControlException;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.BlockDevices;
import io.nvmf4j.bdev.ErrorBdev;
import io.nvmf4j.cmd.CommandDispatcher;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;
import io.nvmf4j.core.AnaPort;
import io.nvmf4j.core.Controller;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.core.Queue;
import io.nvmf4j.core.Reservation;
import io.nvmf4j.core.Subsystem;
import io.nvmf4j.core.Target;
import io.nvmf4j.engine.ConfigController;
import io.nvmf4j.engine.ConfigDocument;
import io.nvmf4j.engine.ControllerInfo;
import io.nvmf4j.engine.Engine;
import io.nvmf4j.engine.Engines;
import io.nvmf4j.engine.ErrorInjection;
import io.nvmf4j.engine.IoNamespace;
import io.nvmf4j.engine.IoObserver;
import io.nvmf4j.engine.LiveDocument;
import io.nvmf4j.engine.MissingVolumes;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.engine.RbdCounters;
import io.nvmf4j.engine.ReservationInfo;
import io.nvmf4j.engine.SubsystemStats;
import io.nvmf4j.nvme.AnaState;
import io.nvmf4j.runtime.PollGroups;
import io.nvmf4j.storage.BdevException;
import io.nvmf4j.transport.Transport;
import io.nvmf4j.transport.TransportType;
import io.nvmf4j.transport.rdma.RdmaTransport;
import io.nvmf4j.transport.tcp.TcpTransport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.IntFunction;

/**
 * The {@code java} engine: a running target built from one configuration document, with our own data
 * path: block devices, subsystems with their namespaces, hosts and listeners, the poll groups and the
 * transports of {@link TransportRegistry} (created on the first listener of their type). Everything above
 * the engine uses it through its {@link ConfigController}, which owns the document; tests of the data path
 * also reach the live objects ({@link #target()}, {@link #pollGroups()}).
 */
public final class JavaEngine implements Engine {
    private static final Logger LOG = LoggerFactory.getLogger(JavaEngine.class);
    /** How long {@link #removeBdev} waits for work on the device to drain before refusing (never freeing). */
    static final long BDEV_DRAIN_TIMEOUT_MS = 10_000;

    private final Target target;
    private final Map<String, BlockDevice> bdevs = new LinkedHashMap<>();
    /** What the start found missing from the pools: not opened, their namespaces not served. */
    private final MissingVolumes missing = new MissingVolumes();
    /** The pools and the volumes they serve as bdevs named {@code <pool>/<volume>}. */
    private final JavaPools pools = new JavaPools(new JavaPools.Engine() {
        @Override
        public Map<String, BlockDevice> bdevs() {
            return bdevs;
        }

        @Override
        public MissingVolumes missing() {
            return missing;
        }

        @Override
        public TargetConfig document() {
            return doc.get();
        }

        @Override
        public List<Namespace> namespacesOn(BlockDevice d) {
            List<Namespace> out = new ArrayList<>();
            for (Subsystem s : target.nvmSubsystems()) {
                for (Namespace ns : s.namespaces()) {
                    if (ns.bdev() == d) {
                        out.add(ns);
                    }
                }
            }
            return out;
        }

        @Override
        public void grow(TargetConfig next, String name, long numBlocks) {
            growBdev(next, next.bdev(name), numBlocks);
        }

        @Override
        public void close(String name) {
            closeBdev(name);
        }
    });
    private final Map<ListenerConfig, InetSocketAddress> bound = new LinkedHashMap<>();
    /** Listeners whose transport cannot run here → why (kept configured, not advertised, not bound). */
    private final Map<ListenerConfig, String> failed = new LinkedHashMap<>();
    /**
     * Namespaces removed (alone or with their subsystem) by bdev name: commands may still run on them until
     * their next step, so {@link #removeBdev} closes a device only once these drained.
     */
    private final Map<String, List<Namespace>> retired = new HashMap<>();
    /** Inside {@link #keepingReservations}: the reservations of namespaces removed meanwhile, by NGUID. */
    private final Map<String, Reservation> parked = new HashMap<>();
    /** The QoS limiters of the namespaces (io.nvmf4j.qos). */
    private final io.nvmf4j.qos.QosPlan qos = new io.nvmf4j.qos.QosPlan();
    private int keeping;
    /** The document as its control layer committed it (read-only here). */
    private final LiveDocument doc;
    /** The document as started: the start-up settings the data path runs with (transports are built from them). */
    private final TargetConfig started;
    private final TransportRegistry registry = TransportRegistry.builtIn();
    /** Running transports by type, in creation order (TCP always, the others at their first listener). */
    private final Map<TransportType, Transport> transports = new LinkedHashMap<>();
    private PollGroups pollGroups;
    private CommandDispatcher dispatcher;
    private boolean closed;
    /** Where reservations with PTPL on are kept, or null (none kept). */
    private final Path stateDir;
    /** Exclusive locks, ANA limits and shared reservations of rbd images served through several gateways. */
    private final RbdGatewayPolicy gateways;

    private JavaEngine(LiveDocument doc, IoObserver observer, Path stateDir) {
        TargetConfig config = doc.get();
        this.stateDir = stateDir;
        this.doc = doc;
        this.started = ConfigDocument.copy(config);
        this.target = new Target(observer);
        this.gateways = new RbdGatewayPolicy(target, doc::get, bdevs);
        target.setAuthTimeoutMs(config.authTimeoutMs);
        target.setDiscoveryEntryFields(registry::type);
        target.setCommandQuiesceTimeMs(config.commandQuiesceTimeMsOrDefault());
    }

    /**
     * Validates the document, fills in missing identities (in memory; the caller persists them), opens
     * the block devices, builds the subsystems and binds every listener. On failure everything opened so
     * far is closed again.
     */
    public static ConfigController<JavaEngine> start(TargetConfig config) throws IOException {
        return start(config, IoObserver.NONE);
    }

    /** As {@link #start(TargetConfig)}, reporting data-path events to {@code observer} (metrics). */
    public static ConfigController<JavaEngine> start(TargetConfig config, IoObserver observer) throws IOException {
        return start(config, observer, null);
    }

    /**
     * As {@link #start(TargetConfig, IoObserver)}, keeping the reservations of namespaces with Persist Through
     * Power Loss on in {@code stateDir} (see {@link ReservationFiles}); null keeps none and PTPL is unsupported.
     */
    public static ConfigController<JavaEngine> start(TargetConfig config, IoObserver observer, Path stateDir)
        throws IOException {
        return ConfigController.start(config, doc -> open(doc, observer, stateDir));
    }

    /** Starts the java engine on the document of {@code doc} (see {@link #start(TargetConfig, IoObserver, Path)}). */
    static JavaEngine open(LiveDocument doc, IoObserver observer, Path stateDir) throws IOException {
        TargetConfig config = doc.get();
        ConfigValidator.validate(config);
        if (!Engines.JAVA.equals(config.engine)) {
            throw new IllegalArgumentException("the document names engine " + config.engine + ", not java: start it "
                + "with Engines.start (the java engine never stands in for another)");
        }
        ConfigStore.assignIdentities(config);
        JavaEngine t = new JavaEngine(doc, observer, stateDir);
        try {
            t.open();
            return t;
        } catch (IOException | RuntimeException e) {
            t.close();
            throw e;
        }
    }

    private void open() throws IOException {
        TargetConfig config = doc.get();
        for (BdevConfig b : config.bdevs) {
            bdevs.put(b.name, gateways.watchHealth(b, BlockDevices.create(b, config.storage, bdevs::get)));
        }
        pools.open(config);
        for (SubsystemConfig s : config.subsystems) {
            target.addSubsystem(buildSubsystem(config, s));
        }
        for (SubsystemConfig s : config.subsystems) {
            gateways.syncExclusiveLocks(s, true);
        }
        pollGroups = new PollGroups(config.cores, config.idleStrategy,
            config.pollGroupCores == null ? null : io.nvmf4j.config.SpdkCores.parse(config.pollGroupCores),
            config.socketIoOrDefault());
        dispatcher = new CommandDispatcher(target);
        transport(TcpTransport.TYPE);
        target.setReferrals(referralListeners(config));
        if (config.discovery != null) {
            for (HostKeyConfig k : config.discovery.hostKeys) {
                target.discovery().setHostKey(k.host, k);
            }
        }
        for (SubsystemConfig s : config.subsystems) {
            for (ListenerConfig l : s.listeners) {
                if (!bound.containsKey(l) && !failed.containsKey(l)) {
                    bindOne(l);
                }
            }
        }
        LOG.info("target up: {} subsystem(s), {} bdev(s), {}", config.subsystems.size(), bdevs.size(),
            pollGroups.describe());
    }

    /**
     * Binds one listener on its transport and records the outcome: bound (with its port, for the discovery log
     * and the API) or, when the transport cannot run here, failed with the transport's reason.
     */
    private boolean bindOne(ListenerConfig l) throws IOException {
        Transport t = transport(registry.type(l.transport));
        InetSocketAddress a = t.listen(l);
        if (a == null) {
            String cause = t.unavailability() == null ? "the " + l.transport + " transport cannot run here"
                : t.unavailability();
            failed.put(l, l.transport + " transport unavailable: " + cause);
            target.setNotServing(l, true);
            return false;
        }
        bound.put(l, a);
        target.setBoundPort(l, a.getPort());
        return true;
    }

    /** The running transport of a type, created at first use with the options the target started with. */
    private Transport transport(TransportType type) {
        return transports.computeIfAbsent(type, t -> t.create(new TransportType.Context(dispatcher, started,
            pollGroups, target.observer())));
    }

    @Override
    public String name() {
        return Engines.JAVA;
    }

    private static List<ListenerConfig> referralListeners(TargetConfig c) {
        List<ListenerConfig> out = new ArrayList<>();
        for (ReferralConfig r : c.referrals) {
            out.add(new ListenerConfig(r.transport, r.address, r.port));
        }
        return out;
    }

    @Override
    public synchronized void addReferral(TargetConfig next, ReferralConfig r) {
        target.setReferrals(referralListeners(next));
    }

    @Override
    public synchronized void removeReferral(TargetConfig next, ReferralConfig r) {
        target.setReferrals(referralListeners(next));
    }

    /** Poll-group threads and their idle strategy. */
    public PollGroups pollGroups() {
        return pollGroups;
    }

    @Override
    public RbdCounters rbdCounters() {
        return RbdGatewayPolicy.COUNTERS;
    }

    @Override
    public double busySeconds() {
        return pollGroups.busySeconds();
    }

    private Subsystem buildSubsystem(TargetConfig doc, SubsystemConfig c) {
        Subsystem s = new Subsystem(c.nqn, false, c.serial, c.model, Target.FIRMWARE, c.maxNamespaces, c.minCntlid,
            c.maxCntlid, c.allowAnyHost);
        s.hosts().addAll(c.hosts);
        for (HostKeyConfig k : c.hostKeys) {
            s.setHostKey(k.host, k);
        }
        s.listeners().addAll(c.listeners);
        for (ListenerConfig l : c.listeners) {
            s.anaPort(l).setAll(l.anaStates);
        }
        for (NamespaceConfig n : c.namespaces) {
            if (missing.serves(c.nqn, n)) {
                s.addNamespace(namespaceOf(doc, c, n));
            }
        }
        return s;
    }

    /**
     * The live namespace of {@code n} in subsystem {@code sc} of document {@code doc}, with its reservation as
     * {@code reservations} says (NamespaceConfig#reservationsOrDefault): shared in the rbd image (under an error bdev
     * too), kept by this target (in the state directory when PTPL is on), or off; conflict when a kept state cannot be
     * read (see ReservationFiles#load).
     */
    private Namespace namespaceOf(TargetConfig doc, SubsystemConfig sc, NamespaceConfig n) {
        Namespace ns = new Namespace(n.nsid, bdevs.get(n.bdev), HexFormat.of().parseHex(n.nguid), uuidBytes(n.uuid),
            n.eui64 == null ? null : HexFormat.of().parseHex(n.eui64));
        ns.setHosts(n.hosts);
        ns.anaGroup(n.anaGroupOrDefault());
        ns.qos(qos.added(doc, sc, n));
        String mode = n.reservationsOrDefault(doc, sc);
        ns.reservationsOn(!NamespaceConfig.RESERVATIONS_OFF.equals(mode));
        Reservation again = parked.remove(n.nguid.toLowerCase(java.util.Locale.ROOT));
        if (again != null) {
            ns.reservation(again); // removed and added again within one change: the same reservation goes on
        } else if (!ns.reservationsOn()) {
            LOG.info("namespace {} of {}: no reservations (reservations {}): no state shared with the other instances"
                + " that export it", n.nsid, sc.nqn, mode);
        } else if (NamespaceConfig.RESERVATIONS_SHARED.equals(mode)
            && RbdGatewayPolicy.sharesReservations(ns.bdev())) {
            try {
                ns.reservation(RbdGatewayPolicy.sharedReservation(ns.bdev())); // shared with every target serving it
            } catch (IOException e) {
                throw ControlException.conflict("namespace " + n.nsid + ": " + e.getMessage());
            }
        } else if (stateDir != null) { // local
            Path file = ReservationFiles.fileFor(stateDir, n.nguid);
            Reservation.State kept;
            try {
                kept = ReservationFiles.load(file);
            } catch (IOException e) {
                throw ControlException.conflict("namespace " + n.nsid + ": " + e.getMessage());
            }
            if (kept != null) {
                LOG.info("namespace {}: reservation kept through the restart ({} registrant(s), type {}) from {}",
                    n.nsid, kept.registrants(), kept.rtype, file);
            }
            ns.reservation(new Reservation(ReservationFiles.store(file), kept));
        }
        ns.reservation().onRemoteNotices(notices -> tellHosts(ns, notices));
        return ns;
    }

    /**
     * Notices of a shared reservation changed through another target (ReservationMetadata): to this target's
     * controllers of the hosts they name, in the subsystem that serves {@code ns} now (none while it is being
     * added or after it left). Any thread; takes no lock of the engine (a watch callback calls it).
     */
    private void tellHosts(Namespace ns, List<Reservation.Notice> notices) {
        for (Subsystem s : target.nvmSubsystems()) {
            if (s.namespace(ns.nsid()) == ns) {
                LOG.info("namespace {} of {}: {} reservation notice(s) from another gateway", ns.nsid(), s.nqn(),
                    notices.size());
                s.reservationNotices(ns.nsid(), notices);
            }
        }
    }

    @Override
    public synchronized ReservationInfo reservation(String nqn, int nsid) {
        Namespace ns = liveSubsystem(nqn).namespace(nsid);
        if (ns == null) {
            throw ControlException.notFound("no namespace " + nsid + " in " + nqn);
        }
        return ReservationStates.info(ns.reservation().state());
    }

    private static byte[] uuidBytes(String uuid) {
        UUID u = UUID.fromString(uuid);
        return ByteBuffer.allocate(16).putLong(u.getMostSignificantBits()).putLong(u.getLeastSignificantBits())
            .array();
    }

    // ------------------------------------------------------------------ data plane
    //
    // Each change comes checked against the whole document (ConfigController) and is applied to the live
    // objects; on failure nothing changes. Changes that remove state wait for a poll-group barrier so no
    // queue still works from the old state; hosts see namespace changes through the changed-namespace AEN
    // and listener/subsystem/host changes through the discovery-change AEN.

    private Subsystem liveSubsystem(String nqn) {
        Subsystem s = target.subsystem(nqn);
        if (s == null || s.isDiscovery()) {
            throw ControlException.notFound("no subsystem " + nqn);
        }
        return s;
    }

    @Override
    public synchronized void addBdev(TargetConfig next, BdevConfig b) {
        BlockDevice d;
        try {
            d = BlockDevices.create(b, next.storage, bdevs::get);
        } catch (BdevException e) {
            throw ControlException.invalid(e.getMessage());
        }
        bdevs.put(b.name, gateways.watchHealth(b, d));
    }

    @Override
    public synchronized void removeBdev(BdevConfig b) {
        closeBdev(b.name);
    }

    /** Closes bdev {@code name} once the namespaces removed from it drained (conflict when they do not in time). */
    private void closeBdev(String name) {
        pollGroups.barrier();
        for (Namespace ns : retired.getOrDefault(name, List.of())) {
            if (!ns.awaitIdle(BDEV_DRAIN_TIMEOUT_MS)) {
                throw ControlException.conflict("bdev " + name + " is still in use by " + ns.inFlight()
                    + " command(s) of a removed namespace " + ns.nsid() + "; try again");
            }
        }
        retired.remove(name);
        bdevs.remove(name).close();
    }

    // ------------------------------------------------------------------ pools and volumes (JavaPools)

    @Override
    public synchronized void addPool(TargetConfig next, PoolConfig p) {
        pools.addPool(p);
    }

    @Override
    public synchronized void removePool(PoolConfig p) {
        pools.removePool(p);
    }

    @Override
    public synchronized PoolInfo poolInfo(PoolConfig p) {
        return pools.info(p);
    }

    @Override
    public synchronized void createVolume(TargetConfig next, String pool, VolumeConfig v) {
        pools.createVolume(pool, v);
    }

    @Override
    public synchronized void resizeVolume(TargetConfig next, String pool, VolumeConfig v, long numBlocks) {
        pools.resizeVolume(next, pool, v, numBlocks);
    }

    @Override
    public synchronized void deleteVolume(String pool, String volume) {
        pools.deleteVolume(pool, volume);
    }

    @Override
    public synchronized long snapshot(String pool, List<String> volumes, String snapshot) {
        return pools.snapshot(pool, volumes, snapshot);
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
    public synchronized void discardVolume(String pool, String volume) {
        pools.discardVolume(pool, volume);
    }

    @Override
    public synchronized void restoreVolume(String pool, VolumeConfig v) {
        pools.restoreVolume(pool, v);
    }

    @Override
    public synchronized void discardSnapshots(String pool, List<String> volumes, String snapshot) {
        pools.discardSnapshots(pool, volumes, snapshot);
    }

    @Override
    public synchronized void restoreSnapshot(String pool, String volume, String snapshot) {
        pools.restoreSnapshot(pool, volume, snapshot);
    }

    @Override
    public synchronized long allocatedBytes(String pool, String volume, String snapshot) {
        return pools.allocatedBytes(pool, volume, snapshot);
    }

    /**
     * What the start found in rbd pool {@code pool}: images and snapshots the document names that the RADOS pool
     * lacks, those it holds that the document does not name, and images brought back from RBD's trash; null for a
     * pool of another kind or added since.
     */
    public synchronized io.nvmf4j.bdev.RbdPool.Reconciled rbdReconciled(String pool) {
        return pools.rbdReconciled(pool);
    }

    /**
     * Runs {@code step} with each volume's name after its snapshot in a group snapshot of an rbd pool, before the
     * next volume's (tests only: another client's write at that point).
     */
    public void rbdGroupSnapshotStep(java.util.function.Consumer<String> step) {
        pools.rbdGroupStep(step);
    }

    @Override
    public synchronized void settle() {
        pools.settle();
    }

    @Override
    public synchronized MissingVolumes missingVolumes() {
        return missing;
    }

    @Override
    public synchronized void injectError(String name, ErrorInjection injection) {
        try {
            errorBdev(name).inject(injection);
        } catch (BdevException e) {
            throw ControlException.invalid(e.getMessage());
        }
    }

    @Override
    public synchronized void clearErrors(String name) {
        errorBdev(name).clear();
    }

    @Override
    public synchronized List<ErrorInjection> errorInjections(String name) {
        return errorBdev(name).injections();
    }

    private ErrorBdev errorBdev(String name) {
        BlockDevice d = bdevs.get(name);
        if (d == null) {
            throw ControlException.notFound("no bdev " + name);
        }
        if (!(d instanceof ErrorBdev e)) {
            throw ControlException.invalid("bdev " + name + " is not an error bdev (type error wraps a base bdev)");
        }
        return e;
    }

    @Override
    public <T> T keepingReservations(java.util.function.Supplier<T> change) {
        synchronized (this) {
            keeping++;
        }
        try {
            return change.get();
        } finally {
            synchronized (this) {
                if (--keeping == 0) {
                    parked.values().forEach(Reservation::forget); // not added again: removed for good
                    parked.clear();
                }
            }
        }
    }

    /** A namespace left its subsystem: no new command reaches it, running ones stop at their next step. */
    private void retire(Namespace ns) {
        ns.markRemoved();
        ns.qos(null); // what QoS holds back on it resumes at the next wake and fails as Invalid Namespace
        if (keeping > 0) {
            parked.put(HexFormat.of().formatHex(ns.nguid()), ns.reservation()); // decided when the change ends
        } else {
            ns.reservation().forget(); // removed through the API: its kept reservation goes with it
        }
        for (List<Namespace> l : retired.values()) {
            l.removeIf(n -> n.inFlight() == 0);
        }
        retired.computeIfAbsent(ns.bdev().name(), k -> new ArrayList<>()).add(ns);
    }

    /** Grows a bdev; every namespace on it reports the new size (changed-namespace AEN). */
    @Override
    public synchronized void growBdev(TargetConfig config, BdevConfig bc, long numBlocks) {
        String name = bc.name;
        BlockDevice d = bdevs.get(name);
        if (numBlocks <= d.numBlocks()) {
            throw ControlException.invalid("numBlocks: " + numBlocks + " does not grow bdev " + name + " ("
                + d.numBlocks() + " blocks); shrinking would lose data");
        }
        try {
            d.grow(numBlocks);
        } catch (BdevException e) {
            throw ControlException.invalid(e.getMessage());
        }
        for (SubsystemConfig s : config.subsystems) {
            for (NamespaceConfig n : s.namespaces) {
                if (name.equals(n.bdev)) {
                    notifyNamespaceChanged(liveSubsystem(s.nqn), n.nsid);
                }
            }
        }
    }

    @Override
    public synchronized void addSubsystem(TargetConfig next, SubsystemConfig added) {
        List<ListenerConfig> newlyBound = bindAll(added.listeners);
        try {
            target.addSubsystem(buildSubsystem(next, added));
        } catch (RuntimeException e) {
            newlyBound.forEach(this::unbindIfUnused);
            throw e;
        }
    }

    @Override
    public synchronized void removeSubsystem(TargetConfig next, SubsystemConfig sc) {
        Subsystem removed = target.removeSubsystem(sc.nqn);
        if (removed != null) {
            removed.namespaces().forEach(this::retire);
        }
        pollGroups.barrier();
        for (ListenerConfig l : sc.listeners) {
            unbindIfUnused(next, l);
        }
    }

    /** Adds a namespace (nsid 0 picks the lowest free one); connected hosts get the changed-namespace AEN. */
    @Override
    public synchronized void addNamespace(TargetConfig next, String nqn, NamespaceConfig added) {
        if (!missing.serves(nqn, added)) {
            return; // the undo of a removal of a namespace whose volume the start found missing
        }
        Subsystem live = liveSubsystem(nqn);
        live.addNamespace(namespaceOf(next, ConfigDocument.subsystem(next, nqn), added));
        notifyNamespaceChanged(live, added.nsid);
    }

    /** Installs {@code doc}'s QoS on every namespace (the limiters whose limits did not change keep their budget). */
    @Override
    public synchronized void applyQos(TargetConfig doc) {
        qos.update(doc);
        for (Subsystem s : target.nvmSubsystems()) {
            for (Namespace ns : s.namespaces()) {
                ns.qos(qos.of(s.nqn(), ns.nsid()));
            }
        }
    }

    @Override
    public synchronized void removeNamespace(String nqn, int nsid) {
        Subsystem live = liveSubsystem(nqn);
        Namespace old = live.removeNamespace(nsid);
        if (old != null) {
            retire(old);
        }
        pollGroups.barrier();
        notifyNamespaceChanged(live, nsid, host -> old == null || old.visibleTo(host));
    }

    /**
     * Makes a masked namespace visible to one more host ({@code add}: its controllers get the changed-namespace AEN
     * and the nsid in log page 04h; the others see no change) or masks it from one (inactive for it from now on; it
     * gets the changed-namespace AEN).
     */
    @Override
    public synchronized void setNamespaceHost(String nqn, int nsid, String hostnqn, boolean add, List<String> hosts) {
        Subsystem live = liveSubsystem(nqn);
        live.namespace(nsid).setHosts(hosts);
        if (!add) {
            pollGroups.barrier(); // commands of that host parsed before the change have passed execute's check
        }
        notifyNamespaceChanged(live, nsid, hostnqn::equals);
    }

    /** Allows a host; with {@code keys} it must authenticate (its key files are checked before anything changes). */
    @Override
    public synchronized void addHost(String nqn, String hostnqn, HostKeyConfig k, HostKeyConfig before) {
        Subsystem live = liveSubsystem(nqn);
        live.setHostKey(hostnqn, k);
        live.hosts().add(hostnqn);
        target.discoveryChanged();
    }

    /** Gives a host a TLS PSK for the discovery subsystem (its key file is checked before anything changes). */
    @Override
    public synchronized void addDiscoveryHostKey(HostKeyConfig k) {
        target.discovery().setHostKey(k.host, k);
    }

    /**
     * Takes a host's TLS PSK off the discovery subsystem: its next handshake to it fails; its discovery controllers
     * are disconnected (they may have come in with that key).
     */
    @Override
    public synchronized void removeDiscoveryHostKey(String hostnqn) {
        target.discovery().setHostKey(hostnqn, null);
        for (Controller c : target.discovery().controllers()) {
            if (c.hostnqn().equals(hostnqn)) {
                c.destroy("host " + hostnqn + "'s discovery key removed");
            }
        }
    }

    /** Disallows a host; its controllers on this subsystem are disconnected. */
    @Override
    public synchronized void removeHost(SubsystemConfig sc, String hostnqn) {
        Subsystem live = liveSubsystem(sc.nqn);
        live.hosts().remove(hostnqn);
        live.setHostKey(hostnqn, null);
        if (!live.allowAnyHost()) {
            for (Controller c : live.controllers()) {
                if (c.hostnqn().equals(hostnqn)) {
                    c.destroy("host " + hostnqn + " disallowed");
                }
            }
        }
        target.discoveryChanged();
    }

    @Override
    public synchronized void setAllowAnyHost(SubsystemConfig sc, boolean allow) {
        Subsystem live = liveSubsystem(sc.nqn);
        live.setAllowAnyHost(allow);
        if (!allow) {
            for (Controller c : live.controllers()) {
                if (!live.allowsHost(c.hostnqn())) {
                    c.destroy("host " + c.hostnqn() + " no longer allowed");
                }
            }
        }
        target.discoveryChanged();
    }

    @Override
    public synchronized void addListener(TargetConfig next, String nqn, ListenerConfig l) {
        bindAll(List.of(l));
        Subsystem live = liveSubsystem(nqn);
        live.anaPort(l).setAll(l.anaStates);
        live.listeners().add(l);
        target.discoveryChanged();
    }

    /** Removes a listener from a subsystem; hosts connected through it are disconnected. */
    @Override
    public synchronized void removeListener(TargetConfig next, String nqn, ListenerConfig l) {
        Subsystem live = liveSubsystem(nqn);
        live.listeners().remove(l);
        live.removeAnaPort(l);
        for (Controller c : live.controllers()) {
            if (c.adminQueue().listener().equals(l)) {
                c.destroy("listener " + l + " removed from " + nqn);
            }
        }
        unbindIfUnused(next, l);
        target.discoveryChanged();
    }

    /**
     * Moves a namespace to ANA group {@code group}; every controller of the subsystem gets the ANA change event and
     * every listener's ANA log page a new change count (the namespace left one group's descriptor for another's on
     * every path), and an rbd image with
     * {@code exclusiveLock} is locked or unlocked as its new group's states ask.
     */
    @Override
    public synchronized void setNamespaceAnaGroup(TargetConfig next, String nqn, int nsid, int group) {
        Subsystem live = liveSubsystem(nqn);
        Namespace ns = live.namespace(nsid);
        if (ns == null) {
            throw ControlException.notFound("no namespace " + nsid + " in " + nqn);
        }
        int before = ns.anaGroup();
        ns.anaGroup(group);
        try {
            gateways.syncExclusiveLocks(ConfigDocument.subsystem(next, nqn), false);
        } catch (IOException e) {
            ns.anaGroup(before);
            throw ControlException.conflict("namespace " + nsid + " of " + nqn + " stays in ANA group " + before + ": "
                + e.getMessage());
        }
        LOG.info("subsystem {}: namespace {} moved from ANA group {} to {}", nqn, nsid, before, group);
        for (ListenerConfig l : live.listeners()) {
            live.anaPort(l).countChange();
            live.anaChanged(l);
        }
    }

    @Override
    public synchronized IntFunction<String> anaStates(String nqn, ListenerConfig l) {
        AnaPort port = liveSubsystem(nqn).anaPort(l);
        return g -> port.state(g).configName();
    }

    /**
     * Sets the state of ANA group {@code group} through listener {@code l} of subsystem {@code nqn} (kept in the
     * listener's {@code anaStates}); hosts connected through that listener get the ANA change AEN when it changed.
     * The state also ends the limit a reconnected rbd gateway put on the group and moves the exclusive locks of its
     * images with it (RbdGatewayPolicy#setAnaState); conflict, and nothing changes, when a lock cannot be taken.
     */
    @Override
    public synchronized void setAnaState(String nqn, ListenerConfig l, int group, String state) {
        Subsystem live = liveSubsystem(nqn);
        AnaState before = live.anaPort(l).state(group);
        List<ListenerConfig> changed;
        try {
            changed = gateways.setAnaState(ConfigDocument.subsystem(doc.get(), nqn), l, group, AnaState.byName(state));
        } catch (IOException e) {
            throw ControlException.conflict("subsystem " + nqn + ": ANA group " + group + " stays " +
                before.configName() + " through " + l + ": " + e.getMessage());
        }
        if (live.anaPort(l).state(group) != before) {
            LOG.info("subsystem {}: ANA group {} is {} through listener {}", nqn, group, state, l);
            live.anaChanged(l);
        }
        changed.forEach(live::anaChanged);
    }

    @Override
    public List<ControllerInfo> controllers(String nqn) {
        Subsystem s = target.subsystem(nqn);
        if (s == null) {
            throw ControlException.notFound("no subsystem " + nqn);
        }
        List<ControllerInfo> out = new ArrayList<>();
        for (Controller c : s.controllers()) {
            List<ControllerInfo.Queue> queues = new ArrayList<>();
            queues.add(new ControllerInfo.Queue(0, c.adminQueue().peer()));
            for (Queue q : c.ioQueues()) {
                queues.add(new ControllerInfo.Queue(q.qid(), q.peer()));
            }
            out.add(new ControllerInfo(c.cntlid(), c.hostnqn(), c.hostid(), c.adminQueue().peer(), c.kato(),
                List.copyOf(queues)));
        }
        return out;
    }

    @Override
    public List<SubsystemStats> subsystemStats() {
        List<Subsystem> all = new ArrayList<>(target.nvmSubsystems());
        all.add(target.discovery());
        List<SubsystemStats> out = new ArrayList<>();
        for (Subsystem s : all) {
            int queues = 0;
            Collection<Controller> controllers = s.controllers();
            for (Controller c : controllers) {
                queues += 1 + c.ioQueues().size();
            }
            out.add(new SubsystemStats(s.nqn(), controllers.size(), queues, s.namespaces().size()));
        }
        return out;
    }

    @Override
    public String subsystemOf(IoNamespace ns) {
        for (Subsystem s : target.nvmSubsystems()) {
            if (s.namespace(ns.nsid()) == ns) {
                return s.nqn();
            }
        }
        return null;
    }

    @Override
    public void probeListener(ListenerConfig l) {
        if (bound.containsKey(l)) {
            return;
        }
        try {
            registry.type(l.transport).probe(l);
        } catch (IllegalArgumentException e) {
            throw ControlException.invalid(e.getMessage());
        } catch (IOException e) {
            throw ControlException.conflict(e.getMessage());
        }
    }

    /** The changed-namespace AEN and log page 04h entry for every controller whose host sees (or saw) nsid. */
    private void notifyNamespaceChanged(Subsystem s, int nsid) {
        Namespace ns = s.namespace(nsid);
        notifyNamespaceChanged(s, nsid, host -> ns == null || ns.visibleTo(host));
    }

    private void notifyNamespaceChanged(Subsystem s, int nsid, java.util.function.Predicate<String> host) {
        for (Controller c : s.controllers()) {
            if (host.test(c.hostnqn())) {
                c.adminQueue().executor().execute(() -> c.namespaceChanged(nsid));
            }
        }
    }

    /**
     * Binds the listeners not bound yet; returns those it bound or found failed (unavailable transport). On a
     * bind failure unbinds them again.
     */
    private List<ListenerConfig> bindAll(List<ListenerConfig> listeners) {
        List<ListenerConfig> newly = new ArrayList<>();
        try {
            for (ListenerConfig l : listeners) {
                if (!bound.containsKey(l) && !failed.containsKey(l)) {
                    bindOne(l);
                    newly.add(l);
                }
            }
            return newly;
        } catch (IOException e) {
            newly.forEach(this::unbindIfUnused);
            throw ControlException.conflict(e.getMessage());
        }
    }

    private void unbindIfUnused(ListenerConfig l) {
        unbindIfUnused(doc.get(), l);
    }

    /** Stops listening on {@code l} unless a subsystem of document {@code c} lists it. */
    private void unbindIfUnused(TargetConfig c, ListenerConfig l) {
        if (ConfigDocument.listens(c, l)) {
            return;
        }
        if (failed.remove(l) != null) {
            target.setNotServing(l, false);
        }
        if (bound.remove(l) != null) {
            target.setBoundPort(l, null);
            transports.get(registry.type(l.transport)).stopListening(l);
        }
    }

    public Target target() {
        return target;
    }

    /** The open block device named {@code name}, or null. */
    public synchronized BlockDevice bdev(String name) {
        return bdevs.get(name);
    }

    @Override
    public Map<ListenerConfig, InetSocketAddress> listeners() {
        return new LinkedHashMap<>(bound);
    }

    @Override
    public synchronized Map<ListenerConfig, String> failedListeners() {
        return new LinkedHashMap<>(failed);
    }

    /** The TCP addresses actually bound, in config order. */
    public List<InetSocketAddress> tcpListenAddresses() {
        List<InetSocketAddress> out = new ArrayList<>();
        bound.forEach((l, a) -> {
            if (registry.type(l.transport) == TcpTransport.TYPE) {
                out.add(a);
            }
        });
        return out;
    }

    /** Why RDMA listeners cannot be bound here; null when RDMA works or no RDMA listener was asked for. */
    public String rdmaUnavailability() {
        Transport rdma = transports.get(RdmaTransport.TYPE);
        return rdma == null ? null : rdma.unavailability();
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        for (Controller c : target.allControllers()) {
            c.destroy("target shutting down");
        }
        // listeners, then every connection, while the poll groups still run their close
        for (Transport t : transports.values()) {
            t.close();
        }
        if (pollGroups != null) {
            pollGroups.close();
        }
        for (BlockDevice b : bdevs.values()) {
            try {
                b.close();
            } catch (RuntimeException e) {
                LOG.warn("closing bdev {}: {}", b.name(), e.toString());
            }
        }
        pools.close();
        LOG.info("target stopped");
    }
}
