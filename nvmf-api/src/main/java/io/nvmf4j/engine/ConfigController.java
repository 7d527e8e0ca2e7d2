package io.nvmf4j.engine;

import io.nvmf4j.ControlException;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.DiscoveryConfig;
import io.nvmf4j.config.DocumentIndex;
import io.nvmf4j.config.EngineCapabilities.Feature;
import io.nvmf4j.config.EngineCapabilities;
import io.nvmf4j.config.HostKeyConfig;
import io.nvmf4j.config.ListenerConfig;
import io.nvmf4j.config.NamespaceConfig;
import io.nvmf4j.config.Nqn;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.QosConfig;
import io.nvmf4j.config.QosGroupConfig;
import io.nvmf4j.config.QosLimits;
import io.nvmf4j.config.ReferralConfig;
import io.nvmf4j.config.SnapshotConfig;
import io.nvmf4j.config.SubsystemConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.function.Function;

/**
 * The control layer of a running target: every call that the REST API, persistence, import, nvmfctl (through the API)
 * and the metrics make, over one {@link Engine}. It owns the configuration document ({@link LiveDocument}): a change is
 * checked first (not found, conflict, then the document validated with the change applied: a change of one bdev or
 * one subsystem against an index of the rest, {@link ConfigValidator#validateChange}, any other whole), then applied
 * to the engine's data plane, and the document with the change is committed only when the engine accepted it; a refused
 * change leaves document and engine as they were and throws {@link ControlException} (invalid → 400, not found → 404,
 * conflict → 409). What an engine cannot do is refused from its {@link EngineCapabilities}, with the reason the
 * validator gives for a document that asks for it. Calls may come from any thread; they are serialised on the
 * engine's monitor, which the engine's own threads take to read the document.
 *
 * @param <E> the engine: tests of a data path reach its live objects through {@link #engine()}
 */
public final class ConfigController<E extends Engine> implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ConfigController.class);
    private final E engine;
    private final LiveDocument doc;
    /** The document as started: the start-up settings in effect (see {@link #startedWith()}). */
    private final TargetConfig started;
    /** The undo of each data-plane step of the change {@link #commit} runs on this thread, newest first. */
    private final ThreadLocal<Deque<Runnable>> undoLog = new ThreadLocal<>();
    /** Where {@link #commit} writes the document; null: nowhere (nothing to undo). */
    private volatile Path file;
    private volatile Saver saver;
    /** The document last written (a growth writes ahead of its change; commit then has nothing left to write). */
    private volatile TargetConfig saved;
    /**
     * The cross-document facts of {@link #indexed} ({@link DocumentIndex}), for the calls that change one bdev or one
     * subsystem; rebuilt when the live document is another (a change made by a whole copy, an undo, a refusal).
     */
    private DocumentIndex index;
    private TargetConfig indexed;
    /** The work of the indexes dropped so far (see {@link #documentWork()}). */
    private long workBefore;

    /** Saves the document durably ({@link io.nvmf4j.config.ConfigJournal#save} in the service). */
    @FunctionalInterface
    public interface Saver {
        void save(Path file, TargetConfig config) throws IOException;
    }

    /** Starts an engine serving {@code document}'s document (validated; the engine fills in missing identities). */
    @FunctionalInterface
    public interface Starter<E extends Engine> {
        E start(LiveDocument document) throws IOException;
    }

    private ConfigController(E engine, LiveDocument doc) {
        this.engine = engine;
        this.doc = doc;
        this.started = ConfigDocument.copy(doc.get());
    }

    /** Starts an engine on {@code config} through {@code starter} and puts this control layer over it. */
    public static <E extends Engine> ConfigController<E> start(TargetConfig config, Starter<E> starter)
        throws IOException {
        LiveDocument doc = new LiveDocument(config);
        return new ConfigController<>(starter.start(doc), doc);
    }

    /** Makes {@link #commit} write the document to {@code file} through {@code saver} after each change. */
    public void persistTo(Path file, Saver saver) {
        this.saver = saver;
        this.file = file;
    }

    /**
     * Runs one change of the configuration ({@code change}: one or more control calls) and commits it: each call
     * validates and applies its step, then the document is saved durably through the {@link Saver} (the service's
     * appends a journal record, {@link io.nvmf4j.config.ConfigJournal}). If the write fails, every
     * data-plane step of the change is undone, newest first, the document is as it was, and
     * {@link PersistenceException} says so. A change that fails itself is not written (each control call leaves
     * engine and document as they were when it refuses). Namespaces removed and added again with the same NGUID
     * within it keep their persistent reservations ({@link Engine#keepingReservations}). Calls made inside
     * {@code change} on this thread belong to it; a nested commit is part of the enclosing one.
     */
    public <T> T commit(Supplier<T> change) {
        if (undoLog.get() != null) {
            return change.get();
        }
        return engine.keepingReservations(() -> {
            TargetConfig before = doc.get();
            Deque<Runnable> log = new ArrayDeque<>();
            undoLog.set(log);
            try {
                T result = change.get();
                TargetConfig now = doc.get();
                if (file != null && now != saved) {
                    write(now, before, log);
                    settle(); // the change is durable: what a committed delete kept for its undo can go
                }
                return result;
            } finally {
                undoLog.remove();
            }
        });
    }

    /** Writes {@code now}; when that fails, takes the steps of {@code log} back and the document to {@code before}. */
    private void write(TargetConfig now, TargetConfig before, Deque<Runnable> log) {
        try {
            saver.save(file, now);
            saved = now;
        } catch (IOException | RuntimeException e) {
            String undone = "the change was undone";
            try {
                synchronized (engine) {
                    log.forEach(Runnable::run);
                    doc.set(before);
                }
            } catch (RuntimeException u) {
                LOG.error("undoing a change that could not be saved failed; the live target differs from {}", file, u);
                undone = "undoing the change failed too (" + u.getMessage() + ")";
            }
            throw notSaved(e, undone);
        }
    }

    private PersistenceException notSaved(Exception e, String consequence) {
        return new PersistenceException("cannot save the configuration to " + file + " (" + e.getMessage() + "); "
            + consequence, e);
    }

    /**
     * Sets {@code next} as the document after a data-plane step; inside {@link #commit}, {@code undo} (given the
     * document as it was before the step) is how the engine takes that step back if the document cannot be written.
     */
    private void applied(TargetConfig next, Consumer<TargetConfig> undo) {
        TargetConfig before = doc.get();
        Deque<Runnable> log = undoLog.get();
        if (log != null) {
            log.push(() -> undo.accept(before));
        }
        doc.set(next);
    }

    /** The engine under this control layer. */
    public E engine() {
        return engine;
    }

    /** The configuration name of the engine ({@code java}, {@code spdk}). */
    public String name() {
        return engine.name();
    }

    /** The live document (owned by this controller; callers must not change it: use the control methods). */
    public TargetConfig config() {
        return doc.get();
    }

    /** "nqn/nsid" of the namespace bdev {@code name} backs, or null (found through the index). */
    public String namespaceOn(String name) {
        synchronized (engine) {
            SubsystemConfig s = index().bdevUser(name);
            for (NamespaceConfig n : s == null ? List.<NamespaceConfig>of() : s.namespaces) {
                if (name.equals(n.bdev)) {
                    return s.nqn + "/" + n.nsid;
                }
            }
            return null;
        }
    }

    /** A deep copy of the live document, safe to hand out and to save. */
    public TargetConfig configSnapshot() {
        synchronized (engine) {
            return ConfigDocument.copy(doc.get());
        }
    }

    /**
     * Orders the live document's lists like {@code order} (which holds the same items): called at the end of a
     * whole-document import so the document read back is the one imported ({@link ConfigDocument#orderLike}).
     */
    public void orderLike(TargetConfig order) {
        synchronized (engine) {
            TargetConfig next = ConfigDocument.copy(doc.get());
            ConfigDocument.orderLike(next, order);
            applied(next, prev -> { });
        }
    }

    /** The document with {@code change} applied, identities assigned and validated (nothing committed). */
    private TargetConfig validatedWith(Consumer<TargetConfig> change) {
        return ConfigDocument.validatedWith(doc.get(), change);
    }

    /**
     * The index of the live document, rebuilt when the document changed other than through it. Owned by the thread
     * that holds the engine's monitor, as the changes are.
     */
    private DocumentIndex index() {
        synchronized (engine) {
            TargetConfig c = doc.get();
            if (indexed != c || index == null) {
                if (index != null) {
                    workBefore += index.visited();
                }
                index = DocumentIndex.of(c);
                indexed = c;
            }
            return index;
        }
    }

    /**
     * Namespaces, host entries and listeners the control layer has looked at to check and index changes made one bdev
     * or one subsystem at a time (rebuilding the index included): the work a change costs, which does not grow with
     * the number of namespaces elsewhere in the document.
     */
    public long documentWork() {
        synchronized (engine) {
            return workBefore + (index == null ? 0 : index.visited());
        }
    }

    /**
     * A document that differs from the live one in subsystem {@code nqn} alone: it shares every other item, holds a
     * copy of that subsystem with {@code change} applied (and identities assigned), and is validated
     * ({@link ConfigValidator#validateChange}) when {@code validate}. Not found for an unknown NQN.
     */
    private Scoped subsystemChanged(String nqn, boolean validate, Consumer<SubsystemConfig> change) {
        DocumentIndex x = index();
        SubsystemConfig old = subsystem(nqn);
        TargetConfig next = ConfigStore.shallowCopy(doc.get());
        int at = indexOf(next.subsystems, old);
        SubsystemConfig now = ConfigDocument.copy(old);
        change.accept(now);
        ConfigStore.assignIdentities(now);
        next.subsystems.set(at, now);
        indexed = null; // the index is in flux until the change is applied
        x.removeSubsystem(old);
        if (validate) {
            ConfigValidator.validateChange(next, x, null, -1, now, at);
        }
        return new Scoped(next, now, x);
    }

    /** A document from {@link #subsystemChanged}, the subsystem it changed and the index it was checked against. */
    private record Scoped(TargetConfig next, SubsystemConfig subsystem, DocumentIndex index) {
        /** The index update that makes {@link #index} describe {@link #next}. */
        Consumer<DocumentIndex> update() {
            return i -> i.addSubsystem(subsystem);
        }
    }

    /** The position of {@code item} (by identity) in {@code list}. */
    private static <T> int indexOf(List<T> list, T item) {
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i) == item) {
                return i;
            }
        }
        throw new IllegalStateException("not in the document: " + item);
    }

    /**
     * As {@link #applied}, for a document checked against index {@code x}: {@code indexUpdate} brings the change into
     * it, which then describes {@code next} (unless it was dropped meanwhile; the next call rebuilds it then).
     */
    private void appliedIndexed(TargetConfig next, Consumer<TargetConfig> undo, DocumentIndex x,
                                Consumer<DocumentIndex> indexUpdate) {
        applied(next, undo);
        if (index == x) {
            indexUpdate.accept(x);
            indexed = next;
        }
    }

    private void appliedIndexed(Scoped scoped, Consumer<TargetConfig> undo) {
        appliedIndexed(scoped.next(), undo, scoped.index(), scoped.update());
    }

    /** The document with {@code change} applied, not validated (a removal the document has no rule against). */
    private TargetConfig changedWith(Consumer<TargetConfig> change) {
        TargetConfig next = ConfigDocument.copy(doc.get());
        change.accept(next);
        return next;
    }

    private SubsystemConfig subsystem(String nqn) {
        SubsystemConfig s = index().subsystem(nqn);
        if (s == null) {
            throw ControlException.notFound("no subsystem " + nqn);
        }
        return s;
    }

    /** Conflict when {@code bdev} already backs a namespace (found through the index). */
    private void checkBdevFree(String bdev) {
        String gone = engine.missingVolumes().cause(bdev);
        if (gone != null) {
            throw ControlException.conflict("bdev: volume " + bdev + " is missing (" + gone + "); a namespace on it"
                + " could not be served");
        }
        SubsystemConfig user = index().bdevUser(bdev);
        for (NamespaceConfig n : user == null ? List.<NamespaceConfig>of() : user.namespaces) {
            if (bdev.equals(n.bdev)) {
                throw ControlException.conflict("bdev " + bdev + " already backs namespace " + n.nsid + " of "
                    + user.nqn);
            }
        }
    }

    /** Subsystem {@code nqn}, whose list {@code list} must hold {@code item} (not found with {@code missing}). */
    private SubsystemConfig subsystemHolding(String nqn, Function<SubsystemConfig, List<?>> list, Object item,
                                             String missing) {
        SubsystemConfig sc = subsystem(nqn);
        if (!list.apply(sc).contains(item)) {
            throw ControlException.notFound(missing);
        }
        return sc;
    }

    // ------------------------------------------------------------------ bdevs

    public BdevConfig addBdev(BdevConfig b) {
        synchronized (engine) {
            if (b == null) {
                throw ControlException.invalid("bdev: missing");
            }
            DocumentIndex x = index();
            if (b.name != null && (b.name.indexOf('/') >= 0 ? doc.get().bdev(b.name) : x.bdev(b.name)) != null) {
                throw ControlException.conflict("bdev " + b.name + " already exists");
            }
            TargetConfig next = ConfigStore.shallowCopy(doc.get());
            next.bdevs.add(b);
            indexed = null; // the validator adds the name to the index
            ConfigValidator.validateChange(next, x, b, next.bdevs.size() - 1, null, -1);
            engine.addBdev(next, b);
            appliedIndexed(next, prev -> engine.removeBdev(b), x, i -> i.addBdev(b));
            return b;
        }
    }

    /** Refused (conflict) while a namespace uses it, or while removed namespaces still run commands on it. */
    public void removeBdev(String name) {
        synchronized (engine) {
            BdevConfig b = plainBdev(name);
            TargetConfig c = doc.get();
            DocumentIndex x = index();
            if (x.hasCrossBdevs() || !c.pools.isEmpty() || x.bdevUser(name) != null) {
                ConfigDocument.checkBdevUnused(c, name);
            }
            TargetConfig next = ConfigStore.shallowCopy(c);
            next.bdevs.remove(indexOf(next.bdevs, b));
            engine.removeBdev(b);
            appliedIndexed(next, prev -> engine.addBdev(prev, b), x, i -> i.removeBdev(b));
        }
    }

    /**
     * Grows a bdev; every namespace on it reports the new size (changed-namespace AEN). Never shrinks. A growth
     * cannot be undone, so inside {@link #commit} the document with the new size is written first; if the bdev then
     * fails to grow, the document before is written again.
     */
    public void growBdev(String name, long numBlocks) {
        synchronized (engine) {
            BdevConfig b = plainBdev(name);
            TargetConfig before = doc.get();
            TargetConfig next = changedWith(c -> c.bdev(name).numBlocks = numBlocks);
            writtenAhead(before, next, () -> engine.growBdev(before, b, numBlocks));
            doc.set(next);
        }
    }

    /**
     * Runs a step that cannot be undone: inside {@link #commit}, {@code next} is written before it (nothing changed
     * when that fails) and {@code before} again when the step fails.
     */
    private void writtenAhead(TargetConfig before, TargetConfig next, Runnable step) {
        boolean ahead = undoLog.get() != null && file != null;
        if (ahead) {
            try {
                saver.save(file, next);
                saved = next;
            } catch (IOException | RuntimeException e) {
                throw notSaved(e, "nothing was changed");
            }
        }
        try {
            step.run();
        } catch (RuntimeException e) {
            if (ahead) {
                writeQuietly(before);
            }
            throw e;
        }
    }

    private void writeQuietly(TargetConfig c) {
        try {
            saver.save(file, c);
            saved = c;
        } catch (IOException | RuntimeException e) {
            LOG.error("cannot restore {} after a refused change: {}", file, e.toString());
        }
    }

    /** Bdev {@code name} of {@code bdevs}: not found otherwise, invalid for a volume (it has its own calls). */
    private BdevConfig plainBdev(String name) {
        BdevConfig b = name != null && name.indexOf('/') < 0 ? index().bdev(name) : doc.get().bdev(name);
        if (b == null) {
            throw ControlException.notFound("no bdev " + name);
        }
        if (BdevConfig.TYPE_VOLUME.equals(b.type)) {
            throw ControlException.invalid("bdev " + name + " is a volume of pool " + b.pool + "; resize or delete it"
                + " as a volume");
        }
        return b;
    }

    /**
     * Makes error bdev {@code name} fail commands as {@code injection} says (an error bdev, {@code "kind": "error"}); not found for an
     * unknown bdev, invalid for one that is not an error bdev or a bad injection, or on an engine without error bdevs.
     */
    public void injectError(String name, ErrorInjection injection) {
        synchronized (engine) {
            errorBdevs().injectError(name, injection);
        }
    }

    /** Stops every injection of error bdev {@code name}. */
    public void clearErrors(String name) {
        synchronized (engine) {
            errorBdevs().clearErrors(name);
        }
    }

    /** The injections active on error bdev {@code name}. */
    public List<ErrorInjection> errorInjections(String name) {
        synchronized (engine) {
            return errorBdevs().errorInjections(name);
        }
    }

    private Engine errorBdevs() {
        if (!engine.capabilities().bdevTypes().contains("error")) {
            throw ControlException.invalid("the " + engine.name() + " engine has no error bdevs");
        }
        return engine;
    }

    // ------------------------------------------------------------------ pools, volumes, snapshots

    /**
     * Where a test stops a change between its file operation and the commit of the document (a crash there): called
     * with the change's name ({@code createVolume}, {@code resizeVolume}, {@code deleteVolume}, {@code snapshot},
     * {@code cloneSnapshot}, {@code deleteSnapshot}) after the engine made the change and before the document holds it;
     * and with {@code settle} after the document is durable and before the engine frees what committed deletes left
     * (a stop there leaves a deleted rbd volume's image in RBD's trash for the next start to remove).
     */
    @FunctionalInterface
    public interface FaultHook {
        void at(String step);
    }

    private volatile FaultHook faults = step -> { };

    /** Installs a fault hook (tests only). */
    public void faultHook(FaultHook hook) {
        this.faults = hook;
    }

    /** Sets {@code next} after the engine made step {@code step}; {@code undo} takes it back (see {@link #applied}). */
    private void commitStep(String step, TargetConfig next, Consumer<TargetConfig> undo) {
        faults.at(step);
        applied(next, undo);
    }

    /** Invalid with the engine's reason unless it keeps pools of {@code kind}. */
    private void checkPoolKind(String kind) {
        EngineCapabilities can = engine.capabilities();
        if (kind != null && !can.poolKinds().contains(kind)) {
            throw ControlException.invalid("kind: " + can.refusal("pool." + kind));
        }
    }

    /**
     * Adds an empty pool (its {@code volumes} absent or empty); invalid when its directory is outside
     * {@code storage.fileDirectories} or its file system cannot hold it (a reflink-dir pool on a file system that
     * cannot reflink), conflict for a name taken.
     */
    public PoolInfo addPool(PoolConfig p) {
        synchronized (engine) {
            if (p == null) {
                throw ControlException.invalid("pool: missing");
            }
            checkPoolKind(p.kind);
            PoolDocument.checkName(p.name, "name");
            if (doc.get().pool(p.name) != null) {
                throw ControlException.conflict("name: pool " + p.name + " already exists");
            }
            if (p.volumes != null && !p.volumes.isEmpty()) {
                throw ControlException.invalid("volumes: a new pool starts empty; create its volumes in it");
            }
            TargetConfig next = validatedWith(c -> c.pools.add(p));
            PoolConfig added = next.pool(p.name);
            engine.addPool(next, added);
            applied(next, prev -> engine.removePool(added));
            return engine.poolInfo(added);
        }
    }

    /** Removes an empty pool (conflict while it has volumes); its directory and anything else in it stay. */
    public void removePool(String name) {
        synchronized (engine) {
            PoolConfig p = PoolDocument.pool(doc.get(), name);
            if (!p.volumes.isEmpty()) {
                throw ControlException.conflict("pool " + name + " still has volume(s) "
                    + p.volumes.stream().map(v -> v.name).toList());
            }
            TargetConfig next = changedWith(c -> c.pools.removeIf(x -> name.equals(x.name)));
            engine.removePool(p);
            applied(next, prev -> engine.addPool(prev, p));
        }
    }

    /** Every pool with its capacity now. */
    public List<PoolInfo> pools() {
        synchronized (engine) {
            return doc.get().pools.stream().map(engine::poolInfo).toList();
        }
    }

    public PoolInfo pool(String name) {
        synchronized (engine) {
            return engine.poolInfo(PoolDocument.pool(doc.get(), name));
        }
    }

    /**
     * Creates a volume: thin unless {@code thick} (then every block is allocated now; invalid when the pool has no
     * room for them, as far as its figures are known: an rbd pool's read 0 until the cluster's manager reports them,
     * and then the cluster's own refusal of a write fails the creation). Invalid for a bad name, block size or size,
     * conflict for a name taken.
     */
    public VolumeInfo createVolume(String pool, VolumeRequest r) {
        synchronized (engine) {
            PoolConfig p = PoolDocument.pool(doc.get(), pool);
            if (r == null) {
                throw ControlException.invalid("volume: missing");
            }
            PoolDocument.checkName(r.name(), "name");
            PoolDocument.checkVolumeFree(p, r.name());
            int bs = PoolDocument.blockSize(r.blockSize());
            long blocks = PoolDocument.blocks(r.size(), bs);
            VolumeConfig v = new VolumeConfig(r.name(), bs, blocks);
            v.thick = Boolean.TRUE.equals(r.thick());
            if (v.thick) {
                PoolInfo info = engine.poolInfo(p);
                long free = info.free();
                if (info.size() > 0 && blocks * bs > free) {
                    throw ControlException.invalid("size: " + blocks * bs + " bytes of a thick volume exceed the free"
                        + " space of pool " + pool + " (" + free + " bytes)");
                }
            }
            TargetConfig next = validatedWith(c -> c.pool(pool).volumes.add(v));
            engine.createVolume(next, pool, next.pool(pool).volume(v.name));
            commitStep("createVolume", next, prev -> engine.discardVolume(pool, v.name));
            return volumeInfo(pool, v.name);
        }
    }

    /** The volumes of a pool, with their provisioned and allocated bytes. */
    public List<VolumeInfo> volumes(String pool) {
        synchronized (engine) {
            return PoolDocument.pool(doc.get(), pool).volumes.stream().map(v -> volumeInfo(pool, v.name)).toList();
        }
    }

    public VolumeInfo volume(String pool, String name) {
        synchronized (engine) {
            PoolDocument.volume(doc.get(), pool, name);
            return volumeInfo(pool, name);
        }
    }

    private VolumeInfo volumeInfo(String pool, String name) {
        TargetConfig c = doc.get();
        VolumeConfig v = PoolDocument.volume(c, pool, name);
        String gone = engine.missingVolumes().cause(pool, v.name, null);
        return new VolumeInfo(pool, v.name, VolumeConfig.bdevName(pool, v.name), v.blockSize,
            v.numBlocks * v.blockSize, gone != null ? 0 : engine.allocatedBytes(pool, v.name, null), !v.thick,
            v.origin, v.snapshots.stream().map(s -> s.name).toList(), PoolDocument.namespaceOf(c, pool, v.name),
            gone == null ? MissingVolumes.AVAILABLE : MissingVolumes.MISSING, gone);
    }

    /**
     * Conflict when the start found volume {@code volume} (snapshot {@code snapshot}, when not null) missing from its
     * pool: {@code what} needs its medium.
     */
    private void checkPresent(String pool, String volume, String snapshot, String what) {
        String gone = engine.missingVolumes().cause(pool, volume, snapshot);
        if (gone != null) {
            throw ControlException.conflict((snapshot == null ? "volume " + volume : "snapshot " + volume + "@"
                + snapshot) + " of pool " + pool + " is missing (" + gone + "); no " + what + " (delete it, or bring"
                + " it back and restart)");
        }
    }

    /**
     * Takes a volume or snapshot the start found missing out of the document ({@code next}) without touching the
     * pool, as {@code step}; an undo records it missing again.
     */
    private void forgetMissing(String step, TargetConfig next, String pool, String volume, String snapshot) {
        MissingVolumes m = engine.missingVolumes();
        String gone = m.remove(pool, volume, snapshot);
        commitStep(step, next, prev -> m.add(pool, volume, snapshot, gone));
    }

    /** Conflict when namespace {@code nsid} of {@code nqn} is not served (its volume is missing). */
    private void checkServed(String nqn, int nsid) {
        String why = engine.missingVolumes().unservedNamespaces(doc.get()).get(nqn + "/" + nsid);
        if (why != null) {
            throw ControlException.conflict("namespace " + nsid + " of " + nqn + " is not served: " + why
                + "; remove it, or bring the volume back and restart");
        }
    }

    /**
     * The namespaces of the document that are not served, {@code <nqn>/<nsid>} → why: those whose volume the start
     * found missing ({@link MissingVolumes}).
     */
    public Map<String, String> unservedNamespaces() {
        synchronized (engine) {
            return engine.missingVolumes().unservedNamespaces(doc.get());
        }
    }

    /**
     * Sets a volume's size: a grow is live (its namespace reports the new size, changed-namespace AEN); a shrink is
     * refused (conflict) while a namespace uses the volume, as it would cut data away under a host. Neither can be
     * undone (hosts saw the growth; a shrink cut the data away), so inside {@link #commit} the document with the new
     * size is written first, as for {@link #growBdev}.
     */
    public VolumeInfo resizeVolume(String pool, String name, java.math.BigInteger size) {
        synchronized (engine) {
            VolumeConfig v = PoolDocument.volume(doc.get(), pool, name);
            long blocks = PoolDocument.blocks(size, v.blockSize);
            if (blocks == v.numBlocks) {
                return volumeInfo(pool, name);
            }
            checkPresent(pool, name, null, "resize");
            String ns = PoolDocument.namespaceOf(doc.get(), pool, name);
            if (blocks < v.numBlocks && ns != null) {
                throw ControlException.conflict("size: volume " + name + " backs namespace " + ns + "; a shrink"
                    + " would cut its data away under the host (remove the namespace first)");
            }
            TargetConfig before = doc.get();
            TargetConfig next = validatedWith(c -> c.pool(pool).volume(name).numBlocks = blocks);
            writtenAhead(before, next, () -> {
                engine.resizeVolume(next, pool, v, blocks);
                faults.at("resizeVolume");
            });
            doc.set(next);
            return volumeInfo(pool, name);
        }
    }

    /**
     * Deletes a volume: conflict while a namespace uses it or it has snapshots (delete the clones, then the
     * snapshots, then the volume). Its blocks are free once the change is durable ({@link #settle}).
     */
    public void deleteVolume(String pool, String name) {
        synchronized (engine) {
            PoolConfig p = PoolDocument.pool(doc.get(), pool);
            VolumeConfig v = PoolDocument.volume(doc.get(), pool, name);
            PoolDocument.checkDeletable(doc.get(), p, v);
            TargetConfig next = changedWith(c -> c.pool(pool).volumes.removeIf(x -> name.equals(x.name)));
            if (engine.missingVolumes().cause(pool, name, null) != null) {
                forgetMissing("deleteVolume", next, pool, name, null);
                return;
            }
            engine.deleteVolume(pool, name);
            commitStep("deleteVolume", next, prev -> engine.restoreVolume(pool, v));
        }
    }

    /**
     * Takes snapshot {@code name} of a volume, crash-consistent when a namespace uses it (see
     * {@link #createGroupSnapshot}). Not found for a missing volume, conflict for a name the volume has.
     */
    public SnapshotTaken createSnapshot(String pool, String volume, String name) {
        return snapshot(pool, List.of(volume), name, null);
    }

    /**
     * Takes snapshot {@code name} of every volume of {@code volumes} at one instant: writes to their namespaces are
     * held, the ones in flight complete, the data is synced, the copies are made, writes resume (the pause is logged
     * and returned). Each snapshot records {@code name} as its group.
     */
    public SnapshotTaken createGroupSnapshot(String pool, List<String> volumes, String name) {
        if (volumes == null || volumes.isEmpty()) {
            throw ControlException.invalid("volumes: name at least one volume");
        }
        if (volumes.stream().distinct().count() != volumes.size()) {
            throw ControlException.invalid("volumes: a volume is named twice: " + volumes);
        }
        return snapshot(pool, volumes, name, name);
    }

    private SnapshotTaken snapshot(String pool, List<String> volumes, String name, String group) {
        synchronized (engine) {
            PoolDocument.checkName(name, "name");
            for (String v : volumes) {
                if (PoolDocument.volume(doc.get(), pool, v).snapshot(name) != null) {
                    throw ControlException.conflict("name: volume " + v + " already has a snapshot " + name);
                }
                checkPresent(pool, v, null, "snapshot");
            }
            String created = java.time.Instant.now().toString();
            TargetConfig next = validatedWith(c -> {
                for (String v : volumes) {
                    VolumeConfig vc = c.pool(pool).volume(v);
                    vc.snapshots.add(new SnapshotConfig(name, vc.numBlocks, created, group));
                }
            });
            long pause = engine.snapshot(pool, volumes, name);
            commitStep("snapshot", next, prev -> engine.discardSnapshots(pool, volumes, name));
            return new SnapshotTaken(volumes.stream().map(v -> snapshotInfo(pool, v, name)).toList(), pause);
        }
    }

    /** The snapshots of a volume, oldest first. */
    public List<SnapshotInfo> snapshots(String pool, String volume) {
        synchronized (engine) {
            return PoolDocument.volume(doc.get(), pool, volume).snapshots.stream()
                .map(s -> snapshotInfo(pool, volume, s.name)).toList();
        }
    }

    private SnapshotInfo snapshotInfo(String pool, String volume, String name) {
        TargetConfig c = doc.get();
        SnapshotConfig s = PoolDocument.snapshot(c, pool, volume, name);
        VolumeConfig v = c.pool(pool).volume(volume);
        long allocated = engine.missingVolumes().cause(pool, volume, name) != null ? 0
            : engine.allocatedBytes(pool, volume, name);
        return new SnapshotInfo(pool, volume, name, s.numBlocks * v.blockSize, allocated, s.created, s.group,
            PoolDocument.clonesOf(c.pool(pool), volume, name));
    }

    /**
     * Makes volume {@code clone} from a snapshot: a thin, writable volume with the snapshot's size and contents,
     * exportable at once. Not found for a missing snapshot, conflict for a name taken.
     */
    public VolumeInfo cloneSnapshot(String pool, String volume, String snapshot, String clone) {
        synchronized (engine) {
            PoolConfig p = PoolDocument.pool(doc.get(), pool);
            SnapshotConfig s = PoolDocument.snapshot(doc.get(), pool, volume, snapshot);
            checkPresent(pool, volume, snapshot, "clone");
            PoolDocument.checkName(clone, "name");
            PoolDocument.checkVolumeFree(p, clone);
            VolumeConfig v = new VolumeConfig(clone, p.volume(volume).blockSize, s.numBlocks);
            v.origin = volume + "@" + snapshot;
            TargetConfig next = validatedWith(c -> c.pool(pool).volumes.add(v));
            engine.cloneSnapshot(next, pool, volume, snapshot, next.pool(pool).volume(clone));
            commitStep("cloneSnapshot", next, prev -> engine.discardVolume(pool, clone));
            return volumeInfo(pool, clone);
        }
    }

    /** Deletes a snapshot: conflict while a volume was cloned from it. */
    public void deleteSnapshot(String pool, String volume, String snapshot) {
        synchronized (engine) {
            PoolConfig p = PoolDocument.pool(doc.get(), pool);
            PoolDocument.snapshot(doc.get(), pool, volume, snapshot);
            PoolDocument.checkSnapshotDeletable(p, volume, snapshot);
            TargetConfig next = changedWith(c -> c.pool(pool).volume(volume).snapshots
                .removeIf(x -> snapshot.equals(x.name)));
            if (engine.missingVolumes().cause(pool, volume, snapshot) != null) {
                forgetMissing("deleteSnapshot", next, pool, volume, snapshot);
                return;
            }
            engine.deleteSnapshot(pool, volume, snapshot);
            commitStep("deleteSnapshot", next, prev -> engine.restoreSnapshot(pool, volume, snapshot));
        }
    }

    /**
     * The committed document is durable now (the service calls it after each save): the engine frees what deletes
     * committed before it left, which could be undone until then.
     */
    public void settle() {
        synchronized (engine) {
            faults.at("settle");
            engine.settle();
        }
    }

    // ------------------------------------------------------------------ subsystems, namespaces, hosts

    public SubsystemConfig addSubsystem(SubsystemConfig s) {
        synchronized (engine) {
            DocumentIndex x = index();
            if (s != null && s.nqn != null && x.subsystem(s.nqn) != null) {
                throw ControlException.conflict("subsystem " + s.nqn + " already exists");
            }
            if (s != null && s.namespaces != null) {
                for (NamespaceConfig n : s.namespaces) {
                    if (n != null) {
                        checkBdevFree(n.bdev);
                    }
                }
            }
            if (s == null) {
                validatedWith(c -> c.subsystems.add(null)); // refused with the validator's words
            }
            TargetConfig next = ConfigStore.shallowCopy(doc.get());
            SubsystemConfig added = ConfigDocument.copy(s);
            next.subsystems.add(added);
            ConfigStore.assignIdentities(added);
            indexed = null; // the validator adds the subsystem's names to the index
            ConfigValidator.validateChange(next, x, null, -1, added, next.subsystems.size() - 1);
            engine.addSubsystem(next, added);
            appliedIndexed(next, prev -> engine.removeSubsystem(prev, added), x, i -> i.addSubsystem(added));
            return added;
        }
    }

    public void removeSubsystem(String nqn) {
        synchronized (engine) {
            SubsystemConfig sc = subsystem(nqn);
            if (QosDocument.inGroups(doc.get(), nqn, 0)) {
                // its namespaces leave their QoS groups with it: a change beyond the subsystem, checked whole
                TargetConfig next = changedWith(c -> {
                    c.subsystems.removeIf(x -> nqn.equals(x.nqn));
                    QosDocument.leaveGroups(c, nqn, 0);
                });
                engine.removeSubsystem(next, sc);
                applied(next, prev -> engine.addSubsystem(prev, sc));
                return;
            }
            DocumentIndex x = index();
            TargetConfig next = ConfigStore.shallowCopy(doc.get());
            next.subsystems.remove(indexOf(next.subsystems, sc));
            engine.removeSubsystem(next, sc);
            appliedIndexed(next, prev -> engine.addSubsystem(prev, sc), x, i -> i.removeSubsystem(sc));
        }
    }

    public void setAllowAnyHost(String nqn, boolean allow) {
        synchronized (engine) {
            SubsystemConfig sc = subsystem(nqn);
            // a host with keys but not in hosts is allowed only by allowAnyHost: the validator says so
            Scoped next = subsystemChanged(nqn, true, s -> s.allowAnyHost = allow);
            boolean was = sc.allowAnyHost;
            engine.setAllowAnyHost(sc, allow);
            appliedIndexed(next, prev -> engine.setAllowAnyHost(ConfigDocument.subsystem(prev, nqn), was));
        }
    }

    /** Adds a namespace (nsid 0 picks the lowest free one); connected hosts get the changed-namespace AEN. */
    public NamespaceConfig addNamespace(String nqn, NamespaceConfig n) {
        synchronized (engine) {
            SubsystemConfig sc = subsystem(nqn);
            if (n == null) {
                throw ControlException.invalid("namespace: missing");
            }
            ConfigDocument.assignNsid(sc, n);
            checkBdevFree(n.bdev);
            Scoped next = subsystemChanged(nqn, true, s -> s.namespaces.add(n));
            NamespaceConfig added = n;
            engine.addNamespace(next.next(), nqn, added);
            appliedIndexed(next, prev -> engine.removeNamespace(nqn, added.nsid));
            return added;
        }
    }

    public void removeNamespace(String nqn, int nsid) {
        synchronized (engine) {
            if (ConfigDocument.namespace(subsystem(nqn), nsid) == null) {
                throw ControlException.notFound("no namespace " + nsid + " in " + nqn);
            }
            if (QosDocument.inGroups(doc.get(), nqn, nsid)) {
                // the namespace leaves its QoS group with it: a change beyond the subsystem, checked whole
                TargetConfig next = changedWith(c -> {
                    ConfigDocument.subsystem(c, nqn).namespaces.removeIf(x -> x.nsid == nsid);
                    QosDocument.leaveGroups(c, nqn, nsid);
                });
                engine.removeNamespace(nqn, nsid);
                applied(next, prev -> engine.addNamespace(prev, nqn, ConfigDocument.namespace(
                    ConfigDocument.subsystem(prev, nqn), nsid)));
                return;
            }
            Scoped next = subsystemChanged(nqn, false, s -> s.namespaces.removeIf(x -> x.nsid == nsid));
            engine.removeNamespace(nqn, nsid);
            appliedIndexed(next, prev -> engine.addNamespace(prev, nqn, ConfigDocument.namespace(
                ConfigDocument.subsystem(prev, nqn), nsid)));
        }
    }

    public void addHost(String nqn, String hostnqn) {
        addHost(nqn, hostnqn, null);
    }

    /**
     * Allows a host that must authenticate with DH-HMAC-CHAP using the key files {@code keys} names ({@code keys}
     * null: as {@link #addHost(String, String)}); the key files are checked before anything changes.
     */
    public void addHost(String nqn, String hostnqn, HostKeyConfig keys) {
        synchronized (engine) {
            SubsystemConfig sc = subsystem(nqn);
            if (sc.hosts.contains(hostnqn)) {
                throw ControlException.conflict("host " + hostnqn + " is already allowed on " + nqn);
            }
            HostKeyConfig k = keys == null ? null : keys.forHost(hostnqn);
            Scoped next = subsystemChanged(nqn, true, s -> {
                s.hosts.add(hostnqn);
                s.hostKeys.removeIf(h -> hostnqn.equals(h.host));
                if (k != null) {
                    s.hostKeys.add(k);
                }
            });
            engine.addHost(nqn, hostnqn, k, ConfigDocument.hostKey(sc, hostnqn));
            appliedIndexed(next, prev -> engine.removeHost(next.subsystem(), hostnqn));
        }
    }

    /** Disallows a host; its controllers on this subsystem are disconnected. */
    public void removeHost(String nqn, String hostnqn) {
        synchronized (engine) {
            SubsystemConfig sc = subsystemHolding(nqn, s -> s.hosts, hostnqn, "host " + hostnqn + " is not in "
                + "the list of " + nqn);
            Scoped next = subsystemChanged(nqn, false, s -> {
                s.hosts.remove(hostnqn);
                s.hostKeys.removeIf(h -> hostnqn.equals(h.host));
            });
            engine.removeHost(sc, hostnqn);
            appliedIndexed(next, prev -> engine.addHost(nqn, hostnqn, ConfigDocument.hostKey(sc, hostnqn), null));
        }
    }

    /**
     * Gives host {@code keys.host} the TLS PSK {@code keys.tlsKey} for the discovery subsystem (a host that discovers
     * over TLS offers an identity naming the discovery NQN); its key file is checked before anything changes.
     * Conflict when that host has one already.
     */
    public void addDiscoveryHostKey(HostKeyConfig keys) {
        synchronized (engine) {
            EngineCapabilities can = engine.capabilities();
            if (!can.has(Feature.DISCOVERY_HOST_KEYS)) {
                throw ControlException.invalid(can.refusal(Feature.DISCOVERY_HOST_KEYS));
            }
            TargetConfig c0 = doc.get();
            if (c0.discovery != null && c0.discovery.hostKey(keys.host) != null) {
                throw ControlException.conflict("host " + keys.host + " already has a key on the discovery subsystem");
            }
            HostKeyConfig k = keys.forHost(keys.host);
            TargetConfig next = validatedWith(c -> {
                if (c.discovery == null) {
                    c.discovery = new DiscoveryConfig();
                }
                c.discovery.hostKeys.add(k);
            });
            engine.addDiscoveryHostKey(k);
            applied(next, prev -> engine.removeDiscoveryHostKey(k.host));
        }
    }

    /** Takes a host's TLS PSK off the discovery subsystem (not found when it has none). */
    public void removeDiscoveryHostKey(String hostnqn) {
        synchronized (engine) {
            TargetConfig c0 = doc.get();
            if (c0.discovery == null || c0.discovery.hostKey(hostnqn) == null) {
                throw ControlException.notFound("host " + hostnqn + " has no key on the discovery subsystem");
            }
            TargetConfig next = changedWith(c -> {
                c.discovery.hostKeys.removeIf(k -> hostnqn.equals(k.host));
                if (c.discovery.hostKeys.isEmpty()) {
                    c.discovery = null;
                }
            });
            engine.removeDiscoveryHostKey(hostnqn);
            applied(next, prev -> engine.addDiscoveryHostKey(prev.discovery.hostKey(hostnqn)));
        }
    }

    /**
     * Makes masked namespace {@code nsid} visible to {@code hostnqn} (per-host masking); that host's controllers get
     * the changed-namespace AEN. Invalid for a namespace without a hosts list, conflict when the host sees it.
     */
    public void addNamespaceHost(String nqn, int nsid, String hostnqn) {
        synchronized (engine) {
            NamespaceConfig n = ConfigDocument.maskedNamespace(subsystem(nqn), nsid);
            if (n.hosts.contains(hostnqn)) {
                throw ControlException.conflict("host " + hostnqn + " already sees namespace " + nsid + " of " + nqn);
            }
            changeNamespaceHosts(nqn, nsid, hostnqn, true);
        }
    }

    /** Masks namespace {@code nsid} from {@code hostnqn}; that host's controllers get the changed-namespace AEN. */
    public void removeNamespaceHost(String nqn, int nsid, String hostnqn) {
        synchronized (engine) {
            NamespaceConfig n = ConfigDocument.maskedNamespace(subsystem(nqn), nsid);
            if (!n.hosts.contains(hostnqn)) {
                throw ControlException.notFound("host " + hostnqn + " is not in the hosts of namespace " + nsid + " of "
                    + nqn);
            }
            changeNamespaceHosts(nqn, nsid, hostnqn, false);
        }
    }

    private void changeNamespaceHosts(String nqn, int nsid, String hostnqn, boolean add) {
        checkServed(nqn, nsid);
        TargetConfig next = validatedWith(c -> {
            List<String> hosts = ConfigDocument.namespace(ConfigDocument.subsystem(c, nqn), nsid).hosts;
            if (add) {
                hosts.add(hostnqn);
            } else {
                hosts.remove(hostnqn);
            }
        });
        engine.setNamespaceHost(nqn, nsid, hostnqn, add,
            ConfigDocument.namespace(ConfigDocument.subsystem(next, nqn), nsid).hosts);
        applied(next, prev -> engine.setNamespaceHost(nqn, nsid, hostnqn, !add,
            ConfigDocument.namespace(ConfigDocument.subsystem(prev, nqn), nsid).hosts));
    }

    // ------------------------------------------------------------------ listeners and referrals

    public void addListener(String nqn, ListenerConfig l) {
        synchronized (engine) {
            SubsystemConfig sc = subsystem(nqn);
            if (l != null && sc.listeners.contains(l)) {
                throw ControlException.conflict("subsystem " + nqn + " already listens on " + l);
            }
            TargetConfig next = validatedWith(c -> ConfigDocument.subsystem(c, nqn).listeners.add(l));
            engine.addListener(next, nqn, ConfigDocument.listener(ConfigDocument.subsystem(next, nqn), l));
            applied(next, prev -> engine.removeListener(prev, nqn, l));
        }
    }

    /** Removes a listener from a subsystem; hosts connected through it are disconnected. */
    public void removeListener(String nqn, ListenerConfig l) {
        synchronized (engine) {
            subsystemHolding(nqn, sc -> sc.listeners, l, "subsystem " + nqn + " has no listener " + l);
            // validated: the last listener that takes TLS of a subsystem with a PSK host may not go
            TargetConfig next = validatedWith(c -> ConfigDocument.subsystem(c, nqn).listeners.remove(l));
            engine.removeListener(next, nqn, l);
            applied(next, prev -> engine.addListener(prev, nqn, ConfigDocument.listener(
                ConfigDocument.subsystem(prev, nqn), l)));
        }
    }

    /**
     * Checks, changing nothing, that a listener not bound yet could be bound now (conflict if not): an import
     * probes every new listener before it removes anything.
     */
    public void probeListener(ListenerConfig l) {
        synchronized (engine) {
            engine.probeListener(l);
        }
    }

    /** Listener as configured → address actually bound (differs when the configured port is 0). */
    public Map<ListenerConfig, InetSocketAddress> listeners() {
        return engine.listeners();
    }

    /**
     * Every listener of the document (each once, in document order) → whether it serves: listening with its
     * bound port, or failed with the cause (a transport this host cannot run, such as rdma without a device).
     */
    public Map<ListenerConfig, ListenerState> listenerStates() {
        synchronized (engine) {
            return ConfigDocument.listenerStates(doc.get(), engine.listeners(), engine.failedListeners());
        }
    }

    public void addReferral(ReferralConfig r) {
        synchronized (engine) {
            if (r != null && doc.get().referrals.contains(r)) {
                throw ControlException.conflict("referral " + r + " already exists");
            }
            TargetConfig next = validatedWith(c -> c.referrals.add(r));
            engine.addReferral(next, r);
            applied(next, prev -> engine.removeReferral(prev, r));
        }
    }

    public void removeReferral(ReferralConfig r) {
        synchronized (engine) {
            if (!doc.get().referrals.contains(r)) {
                throw ControlException.notFound("no referral " + r);
            }
            TargetConfig next = changedWith(c -> c.referrals.remove(r));
            engine.removeReferral(next, r);
            applied(next, prev -> engine.addReferral(prev, r));
        }
    }

    /**
     * Stores the settings that only take effect at the next start ({@code engine}, {@code cores},
     * {@code idleStrategy}, {@code socketIo}, {@code tcp}, {@code rdma}, {@code spdk}, {@code api}) from {@code from}, after validating the
     * document with them; the running data path keeps its current settings.
     */
    public void setStartupSettings(TargetConfig from) {
        synchronized (engine) {
            applied(ConfigDocument.withStartupSettings(doc.get(), from), prev -> { });
        }
    }

    /**
     * A deep copy of the document as this engine started: its start-up settings ({@code engine}, {@code cores},
     * {@code idleStrategy}, {@code socketIo}, {@code tcp}, {@code rdma}, {@code spdk}, {@code api}) are the ones in effect until the
     * next start, whatever {@link #setStartupSettings} stored since (a transport created later, at its first
     * listener, is built from these too).
     */
    public TargetConfig startedWith() {
        return ConfigDocument.copy(started);
    }

    // ------------------------------------------------------------------ ANA and reservations

    /**
     * The ANA groups of subsystem {@code nqn} through listener {@code l} with their states (ANA: each listener is a
     * path with its own states); not found for an unknown subsystem or listener.
     */
    public List<AnaGroupInfo> anaGroups(String nqn, ListenerConfig l) {
        synchronized (engine) {
            SubsystemConfig sc = subsystem(nqn);
            return AnaGroupInfo.of(sc, l, engine.anaStates(nqn, ConfigDocument.listener(sc, l)));
        }
    }

    /**
     * Sets ANA group {@code group}'s state through listener {@code l} ({@code optimized}, {@code non-optimized},
     * {@code inaccessible}, {@code persistent-loss}, {@code change}); kept in the listener's {@code anaStates}. Hosts
     * connected through that listener get the ANA change event. Invalid for a bad group id or state name.
     */
    public void setAnaState(String nqn, ListenerConfig l, int group, String state) {
        synchronized (engine) {
            ConfigDocument.listener(subsystem(nqn), l);
            TargetConfig next = validatedWith(c -> ConfigDocument.putAnaState(
                ConfigDocument.listener(ConfigDocument.subsystem(c, nqn), l), group, state));
            String was = engine.anaStates(nqn, ConfigDocument.listener(subsystem(nqn), l)).apply(group);
            engine.setAnaState(nqn, l, group, state);
            applied(next, prev -> engine.setAnaState(nqn, l, group, was));
        }
    }

    /**
     * Moves namespace {@code nsid} of {@code nqn} to ANA group {@code group} while it serves (kept as its
     * {@code anaGroup}); the connected hosts are told and read the ANA log page with the namespace in its new group.
     * Not found for an unknown subsystem or namespace; invalid for a group the document may not have (out of range,
     * or above maxNamespaces on an engine without {@link Feature#ANA_GROUPS_ABOVE_MAX_NAMESPACES}).
     */
    public NamespaceConfig setNamespaceAnaGroup(String nqn, int nsid, int group) {
        synchronized (engine) {
            NamespaceConfig n = ConfigDocument.namespace(subsystem(nqn), nsid);
            if (n == null) {
                throw ControlException.notFound("no namespace " + nsid + " in " + nqn);
            }
            int was = n.anaGroupOrDefault();
            checkServed(nqn, nsid);
            TargetConfig next = validatedWith(c -> ConfigDocument.namespace(ConfigDocument.subsystem(c, nqn), nsid)
                .anaGroup = group);
            if (was != group) {
                engine.setNamespaceAnaGroup(next, nqn, nsid, group);
            }
            applied(next, prev -> engine.setNamespaceAnaGroup(prev, nqn, nsid, was));
            return ConfigDocument.namespace(ConfigDocument.subsystem(next, nqn), nsid);
        }
    }

    /**
     * Runs one change of the configuration (its control calls, the save and, when that fails, the undo) so that a
     * namespace removed and added again with the same NGUID within it keeps its persistent reservation and the
     * file it is kept in (see {@link Engine#keepingReservations}).
     */
    public <T> T keepingReservations(java.util.function.Supplier<T> change) {
        return engine.keepingReservations(change);
    }

    /**
     * The persistent reservation of a namespace (registrants, holder, type, PTPL), read-only; not found for an
     * unknown subsystem or nsid. Engines that cannot show it refuse (invalid).
     */
    public ReservationInfo reservation(String nqn, int nsid) {
        EngineCapabilities can = engine.capabilities();
        if (!can.has(Feature.RESERVATION_REPORT)) {
            throw ControlException.invalid(can.refusal(Feature.RESERVATION_REPORT));
        }
        synchronized (engine) {
            subsystem(nqn);
            return engine.reservation(nqn, nsid);
        }
    }

    // ------------------------------------------------------------------ QoS

    /**
     * Sets (or replaces) the QoS limits of namespace {@code nsid} of {@code nqn}, live: I/O from now on takes its
     * budget from them. Invalid (naming the field) for a limit out of range or one the engine cannot keep; not found
     * for an unknown namespace.
     */
    public QosConfig setNamespaceQos(String nqn, int nsid, QosLimits limits) {
        synchronized (engine) {
            QosDocument.namespace(doc.get(), nqn, nsid);
            TargetConfig next = changeQos(c -> QosDocument.namespaceQos(c, nqn, nsid).setLimits(limits));
            return QosDocument.namespace(next, nqn, nsid).qos;
        }
    }

    /** Removes the QoS limits of namespace {@code nsid} (its hosts' stay); not found when it has none. */
    public void removeNamespaceQos(String nqn, int nsid) {
        synchronized (engine) {
            QosConfig q = QosDocument.namespace(doc.get(), nqn, nsid).qos;
            if (q == null || q.isUnlimited()) {
                throw ControlException.notFound("namespace " + nsid + " of " + nqn + " has no QoS limits");
            }
            changeQos(c -> QosDocument.namespaceQos(c, nqn, nsid).setLimits(null));
        }
    }

    /** Sets (or replaces) the limits of host {@code hostnqn}'s I/O to namespace {@code nsid}, live. */
    public QosLimits setNamespaceHostQos(String nqn, int nsid, String hostnqn, QosLimits limits) {
        synchronized (engine) {
            QosDocument.namespace(doc.get(), nqn, nsid);
            TargetConfig next = changeQos(c -> QosDocument.putHost(QosDocument.namespaceQos(c, nqn, nsid), hostnqn,
                limits));
            return QosDocument.namespace(next, nqn, nsid).qos.host(hostnqn);
        }
    }

    public void removeNamespaceHostQos(String nqn, int nsid, String hostnqn) {
        synchronized (engine) {
            QosDocument.checkHost(QosDocument.namespace(doc.get(), nqn, nsid).qos, hostnqn,
                "namespace " + nsid + " of " + nqn);
            changeQos(c -> QosDocument.removeHost(QosDocument.namespace(c, nqn, nsid).qos, hostnqn));
        }
    }

    /** Sets (or replaces) the limits of host {@code hostnqn}'s I/O to all namespaces of subsystem {@code nqn}, live. */
    public QosLimits setSubsystemHostQos(String nqn, String hostnqn, QosLimits limits) {
        synchronized (engine) {
            subsystem(nqn);
            TargetConfig next = changeQos(c -> QosDocument.putHost(QosDocument.subsystemQos(c, nqn), hostnqn, limits));
            return ConfigDocument.subsystem(next, nqn).qos.host(hostnqn);
        }
    }

    public void removeSubsystemHostQos(String nqn, String hostnqn) {
        synchronized (engine) {
            QosDocument.checkHost(subsystem(nqn).qos, hostnqn, nqn);
            changeQos(c -> QosDocument.removeHost(ConfigDocument.subsystem(c, nqn).qos, hostnqn));
        }
    }

    /**
     * Creates QoS group {@code g.name}: its namespaces' I/O together takes its budget from its limits, live. Invalid
     * (naming the field) for an unknown namespace, one named twice or in another group, a bad limit; conflict for a
     * name taken.
     */
    public QosGroupConfig addQosGroup(QosGroupConfig g) {
        synchronized (engine) {
            if (g == null) {
                throw ControlException.invalid("body: missing");
            }
            if (g.name != null && doc.get().qosGroup(g.name) != null) {
                throw ControlException.conflict("name: QoS group " + g.name + " already exists");
            }
            return changeQos(c -> c.qosGroups.add(g)).qosGroup(g.name);
        }
    }

    /** Replaces QoS group {@code g.name} (its namespaces and limits), live; not found for an unknown group. */
    public QosGroupConfig setQosGroup(QosGroupConfig g) {
        synchronized (engine) {
            QosGroupConfig was = QosDocument.group(doc.get(), g.name);
            int at = doc.get().qosGroups.indexOf(was);
            return changeQos(c -> c.qosGroups.set(at, g)).qosGroup(g.name);
        }
    }

    public void removeQosGroup(String name) {
        synchronized (engine) {
            QosDocument.group(doc.get(), name);
            changeQos(c -> c.qosGroups.removeIf(x -> name.equals(x.name)));
        }
    }

    /**
     * Sets every QoS setting (namespaces', subsystems' hosts', groups) as {@code from} has them, for the objects the
     * document has: a whole-document import ends with it. Nothing happens when they are the same.
     */
    public void replaceQos(TargetConfig from) {
        synchronized (engine) {
            TargetConfig trial = changedWith(c -> QosDocument.copyQos(from, c));
            if (!io.nvmf4j.config.ConfigStore.toJson(trial).equals(io.nvmf4j.config.ConfigStore.toJson(doc.get()))) {
                changeQos(c -> QosDocument.copyQos(from, c));
            }
        }
    }

    /** Applies a QoS change: the document with it validated, the engine's limiters set, the document committed. */
    private TargetConfig changeQos(Consumer<TargetConfig> change) {
        TargetConfig next = validatedWith(c -> {
            change.accept(c);
            QosDocument.tidy(c);
        });
        engine.applyQos(next);
        applied(next, engine::applyQos);
        return next;
    }

    // ------------------------------------------------------------------ state and statistics

    /** Live controllers of a subsystem (the discovery NQN included); not found for an unknown NQN. */
    public List<ControllerInfo> controllers(String nqn) {
        if (!Nqn.DISCOVERY.equals(nqn)) {
            ConfigDocument.subsystem(doc.get(), nqn); // not found otherwise; read without the engine's monitor
        }
        return engine.controllers(nqn);
    }

    /** Per-subsystem counts (the discovery subsystem included) for the metrics. */
    public List<SubsystemStats> subsystemStats() {
        return engine.subsystemStats();
    }

    /** Seconds the data-path threads have spent working since the engine started ({@link Engine#busySeconds}). */
    public double busySeconds() {
        return engine.busySeconds();
    }

    /** The NQN of the subsystem a namespace reported by the engine's observer belongs to, or null. */
    public String subsystemOf(IoNamespace ns) {
        return engine.subsystemOf(ns);
    }

    /** Disconnects every host, stops the data path, flushes and closes the block devices. */
    @Override
    public void close() {
        engine.close();
    }
}
