package io.nvmf4j.javaengine;

import io.nvmf4j.ControlException;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.FileBdev;
import io.nvmf4j.bdev.ReflinkPool;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;
import io.nvmf4j.core.Namespace;
import io.nvmf4j.engine.MissingVolumes;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.nvme.NvmeStatus;
import io.nvmf4j.storage.BdevException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The java engine's pools ({@link ReflinkPool}; rbd pools through {@link RbdVolumes}) and the volumes it serves from them: each volume is open as a
 * {@link FileBdev} named {@code <pool>/<volume>} in the engine's bdevs, so a namespace uses it like any bdev. Called
 * by {@link JavaEngine} holding its monitor.
 *
 * <p>A snapshot of volumes that namespaces use is crash-consistent: their writes are held
 * ({@link Namespace#holdWrites}), a fence waits for the commands already on the devices, the files are synced and
 * cloned, and the held writes run on. The pause is logged with its length.
 */
final class JavaPools {
    private static final Logger LOG = LoggerFactory.getLogger(JavaPools.class);
    /** How long a snapshot waits for the commands on its volumes to complete before it gives up (conflict). */
    static final long DRAIN_TIMEOUT_MS = 10_000;
    /** Where the snapshot's fences poll (no poll group runs them). */
    private static final ScheduledExecutorService FENCES = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nvmf4j-snapshot-fence");
        t.setDaemon(true);
        return t;
    });

    /**
     * How often every reflink pool's use is read, so that its warning watermark is crossed (logged, counted) while
     * hosts fill it, not only when someone reads its capacity or creates a volume.
     */
    static final long WATERMARK_PERIOD_MS = 5_000;
    /** Where the reflink pools' use is read every {@link #WATERMARK_PERIOD_MS} (one statvfs per pool). */
    private static final ScheduledExecutorService WATERMARKS = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "nvmf4j-pool-watermark");
        t.setDaemon(true);
        return t;
    });

    /** What the pools need of their engine. */
    interface Engine {
        Map<String, BlockDevice> bdevs();

        /** What the start found missing from the pools ({@link MissingVolumes}). */
        MissingVolumes missing();

        /** The committed document (a change under way is not in it yet). */
        TargetConfig document();

        /** The live namespaces on {@code d}, in every subsystem. */
        List<Namespace> namespacesOn(BlockDevice d);

        /** Grows bdev {@code name} and tells the hosts of its namespaces ({@link JavaEngine#growBdev}). */
        void grow(TargetConfig doc, String name, long numBlocks);

        /**
         * Closes bdev {@code name} and takes it out of {@link #bdevs} once the namespaces removed from it drained
         * (conflict when they do not in time; then nothing changed).
         */
        void close(String name);
    }

    private final Engine engine;
    private final Map<String, ReflinkPool> pools = new LinkedHashMap<>();
    /** The reflink pools open now, read by the watermark timer (the control thread changes {@link #pools}). */
    private final Map<String, ReflinkPool> watched = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.ScheduledFuture<?> watching;
    /** The pools of kind rbd, which every call below hands over to. */
    private final RbdVolumes rbd;

    JavaPools(Engine engine) {
        this.engine = engine;
        this.rbd = new RbdVolumes(engine, this);
        this.watching = WATERMARKS.scheduleWithFixedDelay(this::checkWatermarks, WATERMARK_PERIOD_MS,
            WATERMARK_PERIOD_MS, java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    /** Reads each reflink pool's use, which logs and counts a crossing of its watermark ({@link ReflinkPool}). */
    private void checkWatermarks() {
        for (ReflinkPool p : watched.values()) {
            try {
                p.capacity();
            } catch (RuntimeException e) {
                LOG.debug("pool {}: its use could not be read: {}", p.name(), e.getMessage());
            }
        }
    }

    /** See {@link JavaEngine#rbdGroupSnapshotStep}. */
    void rbdGroupStep(java.util.function.Consumer<String> step) {
        rbd.groupStep(step);
    }

    /** What the start found in rbd pool {@code pool} against the document (null for another kind or a new pool). */
    io.nvmf4j.bdev.RbdPool.Reconciled rbdReconciled(String pool) {
        return rbd.reconciled(pool);
    }

    /**
     * At start: opens every pool of {@code c}, makes its directory agree with the document (files left by changes
     * never committed are removed, see {@link ReflinkPool#reconcile}) and opens its volumes. A volume or snapshot
     * whose file is missing goes to {@link Engine#missing}; the volume is not opened (the start goes on).
     */
    void open(TargetConfig c) {
        for (PoolConfig p : c.pools) {
            if (PoolConfig.KIND_RBD.equals(p.kind)) {
                rbd.open(p);
                continue;
            }
            ReflinkPool pool = ReflinkPool.open(p.name, Path.of(p.path), p.warnPercentOrDefault());
            pools.put(p.name, pool);
            watched.put(p.name, pool);
            ReflinkPool.Reconciled r = pool.reconcile(p);
            for (VolumeConfig v : p.volumes) {
                for (io.nvmf4j.config.SnapshotConfig s : v.snapshots) {
                    String file = pool.snapshotPath(v.name, s.name).getFileName().toString();
                    if (r.missing().contains(file)) {
                        engine.missing().add(p.name, v.name, s.name, "file " + file + " is not in " + p.path);
                    }
                }
                String file = pool.volumePath(v.name).getFileName().toString();
                if (r.missing().contains(file)) {
                    engine.missing().add(p.name, v.name, null, "file " + file + " is not in " + p.path);
                } else {
                    openVolume(p.name, v);
                }
            }
            LOG.info("pool {}: {} volume(s) in {}{}", p.name, p.volumes.size(), p.path, r.removed().isEmpty()
                ? "" : "; removed " + r.removed().size() + " file(s) the configuration does not name");
        }
    }

    void addPool(PoolConfig p) {
        if (PoolConfig.KIND_RBD.equals(p.kind)) {
            rbd.addPool(p);
            return;
        }
        ReflinkPool pool = call(() -> ReflinkPool.open(p.name, Path.of(p.path), p.warnPercentOrDefault()), "path");
        List<String> theirs = pool.poolFiles();
        if (!theirs.isEmpty()) {
            throw ControlException.invalid("path: " + p.path + " holds pool files already " + theirs + "; a new pool"
                + " needs a directory without them");
        }
        pools.put(p.name, pool);
        watched.put(p.name, pool);
        LOG.info("pool {}: added in {} ({} bytes free)", p.name, p.path, pool.capacity().free());
    }

    void removePool(PoolConfig p) {
        if (rbd.has(p.name)) {
            rbd.removePool(p);
            return;
        }
        pools.remove(p.name);
        watched.remove(p.name);
    }

    PoolInfo info(PoolConfig p) {
        if (rbd.has(p.name)) {
            return rbd.info(p);
        }
        ReflinkPool pool = pool(p.name);
        ReflinkPool.Capacity c = call(pool::capacity, "path");
        return new PoolInfo(p.name, p.kind, p.path, c.size(), c.used(), c.free(), p.warnPercentOrDefault(),
            pool.watermarkCrossings(), p.volumes.size());
    }

    void createVolume(String poolName, VolumeConfig v) {
        if (rbd.has(poolName)) {
            rbd.createVolume(poolName, v);
            return;
        }
        ReflinkPool pool = pool(poolName);
        call(() -> {
            pool.createVolume(v);
            return null;
        }, "size");
        openOrDiscard(poolName, v);
        pool.capacity(); // the watermark
    }

    void cloneSnapshot(String poolName, String volume, String snapshot, VolumeConfig clone) {
        if (rbd.has(poolName)) {
            rbd.cloneSnapshot(poolName, volume, snapshot, clone);
            return;
        }
        ReflinkPool pool = pool(poolName);
        call(() -> {
            pool.cloneSnapshot(volume, snapshot, clone.name);
            return null;
        }, "name");
        openOrDiscard(poolName, clone);
    }

    /** Opens a volume just made; when it cannot open, removes it again (invalid, with the reason). */
    void openOrDiscard(String poolName, VolumeConfig v) {
        try {
            openVolume(poolName, v);
        } catch (BdevException e) {
            store(poolName).discardVolume(v.name);
            throw ControlException.invalid(e.getMessage());
        }
    }

    void openVolume(String poolName, VolumeConfig v) {
        String bdev = VolumeConfig.bdevName(poolName, v.name);
        engine.bdevs().put(bdev, store(poolName).openVolume(bdev, v));
    }

    /**
     * A grow runs live on the open bdev (hosts told); a shrink (no namespace uses the volume) closes the bdev, sets
     * the medium's size and opens it again.
     */
    void resizeVolume(TargetConfig next, String poolName, VolumeConfig v, long numBlocks) {
        String bdev = VolumeConfig.bdevName(poolName, v.name);
        if (numBlocks > v.numBlocks) {
            engine.grow(next, bdev, numBlocks);
            return;
        }
        engine.close(bdev);
        try {
            store(poolName).setVolumeSize(v.name, numBlocks * v.blockSize);
        } catch (BdevException e) {
            openVolume(poolName, v);
            throw ControlException.invalid(e.getMessage());
        }
        openVolume(poolName, next.pool(poolName).volume(v.name));
    }

    /**
     * Closes the volume's bdev first (conflict, nothing changed, while a removed namespace's commands still run on
     * it), then moves its medium to the pool's trash; the bdev opens again when that fails.
     */
    void deleteVolume(String poolName, String volume) {
        VolumeConfig v = engine.document().pool(poolName).volume(volume);
        if (rbd.has(poolName)) {
            rbd.beforeDelete(poolName, volume);
        }
        engine.close(VolumeConfig.bdevName(poolName, volume));
        try {
            store(poolName).trashVolume(volume);
        } catch (BdevException e) {
            openVolume(poolName, v);
            throw ControlException.invalid("name: " + e.getMessage());
        }
    }

    void deleteSnapshot(String poolName, String volume, String snapshot) {
        if (rbd.has(poolName)) {
            rbd.deleteSnapshot(poolName, volume, snapshot);
            return;
        }
        call(() -> {
            pool(poolName).trashSnapshot(volume, snapshot);
            return null;
        }, "name");
    }

    /** The undo of a create or clone: closes the volume's bdev and removes its medium now. */
    void discardVolume(String poolName, String volume) {
        engine.close(VolumeConfig.bdevName(poolName, volume));
        store(poolName).discardVolume(volume);
    }

    /** The undo of a delete: the volume comes back from the pool's trash and opens again. */
    void restoreVolume(String poolName, VolumeConfig v) {
        store(poolName).restoreVolume(v.name);
        openVolume(poolName, v);
    }

    void discardSnapshots(String poolName, List<String> volumes, String snapshot) {
        if (rbd.has(poolName)) {
            rbd.discardSnapshots(poolName, volumes, snapshot);
            return;
        }
        for (String v : volumes) {
            pool(poolName).discardSnapshot(v, snapshot);
        }
    }

    void restoreSnapshot(String poolName, String volume, String snapshot) {
        if (rbd.has(poolName)) {
            rbd.restoreSnapshot(poolName, volume, snapshot);
            return;
        }
        pool(poolName).restoreSnapshot(volume, snapshot);
    }

    /** Closes the rbd pools' clients (the engine stops; the volumes' bdevs are closed by it). */
    void close() {
        watching.cancel(false);
        watched.clear();
        rbd.close();
    }

    /** Empties every pool's trash: the deletes committed so far are durable. */
    void settle() {
        rbd.settle();
        for (ReflinkPool p : pools.values()) {
            List<String> removed = p.emptyTrash();
            if (!removed.isEmpty()) {
                LOG.info("pool {}: removed {}", p.name(), removed);
            }
        }
    }

    long allocatedBytes(String poolName, String volume, String snapshot) {
        if (rbd.has(poolName)) {
            return rbd.allocatedBytes(poolName, volume, snapshot);
        }
        ReflinkPool pool = pool(poolName);
        if (snapshot == null && engine.bdevs().get(VolumeConfig.bdevName(poolName, volume)) instanceof FileBdev f) {
            return f.allocatedBytes();
        }
        return call(() -> pool.allocatedBytes(snapshot == null ? pool.volumePath(volume).getFileName().toString()
            : pool.snapshotPath(volume, snapshot).getFileName().toString()), "name");
    }

    /**
     * Snapshot {@code snapshot} of each of {@code volumes} at one instant (see the class comment); the pause in
     * nanoseconds (0 when no namespace uses them). A failure before the copies are all made removes those made.
     */
    long snapshot(String poolName, List<String> volumes, String snapshot) {
        if (rbd.has(poolName)) {
            return rbd.snapshot(poolName, volumes, snapshot);
        }
        ReflinkPool pool = pool(poolName);
        List<String> made = new ArrayList<>();
        return withWritesHeld(poolName, volumes, snapshot, devices -> {
            try {
                for (int i = 0; i < volumes.size(); i++) {
                    FileBdev d = (FileBdev) devices.get(i);
                    int synced = d.sync();
                    if (synced != NvmeStatus.SUCCESS) {
                        throw ControlException.conflict("volume " + volumes.get(i) + ": its data could not be synced"
                            + " before the snapshot (the device reports write faults now)");
                    }
                    String v = volumes.get(i);
                    call(() -> {
                        pool.snapshot(d, v, snapshot);
                        return null;
                    }, "name");
                    made.add(v);
                }
            } catch (RuntimeException e) {
                for (String v : made) {
                    pool.trashSnapshot(v, snapshot);
                }
                pool.emptyTrash();
                throw e;
            }
        });
    }

    /**
     * Runs {@code take} on the bdevs of {@code volumes} (in their order) with the writes to every namespace on them
     * held and the commands already on the devices completed, then lets the held writes run on in their order; the
     * pause in nanoseconds (0, and nothing held, when no namespace uses them), logged. Every pool kind's snapshot
     * runs inside this one hold.
     */
    long withWritesHeld(String poolName, List<String> volumes, String snapshot,
                        java.util.function.Consumer<List<BlockDevice>> take) {
        List<BlockDevice> devices = new ArrayList<>();
        List<Namespace> held = new ArrayList<>();
        for (String v : volumes) {
            BlockDevice d = engine.bdevs().get(VolumeConfig.bdevName(poolName, v));
            devices.add(d);
            held.addAll(engine.namespacesOn(d));
        }
        long start = System.nanoTime();
        held.forEach(Namespace::holdWrites);
        try {
            drain(held);
            take.accept(devices);
        } finally {
            for (Namespace ns : held) {
                ns.resumeWrites().forEach(Runnable::run);
            }
        }
        long pause = held.isEmpty() ? 0 : System.nanoTime() - start;
        if (!held.isEmpty()) {
            LOG.info("pool {}: snapshot {} of {}: writes to {} namespace(s) held for {} us", poolName, snapshot,
                volumes, held.size(), TimeUnit.NANOSECONDS.toMicros(pause));
        }
        return pause;
    }

    /** Waits until the commands already on the held namespaces completed; conflict after the bound. */
    private static void drain(List<Namespace> held) {
        CountDownLatch done = new CountDownLatch(held.size());
        for (Namespace ns : held) {
            ns.fence(FENCES, done::countDown);
        }
        try {
            if (!done.await(DRAIN_TIMEOUT_MS, TimeUnit.MILLISECONDS)) {
                throw ControlException.conflict("commands on the volumes did not complete within " + DRAIN_TIMEOUT_MS
                    + " ms; no snapshot taken, try again");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw ControlException.conflict("interrupted while waiting for the volumes' commands; no snapshot taken");
        }
    }

    /** Pool {@code name}'s volumes' medium, whichever its kind. */
    private io.nvmf4j.bdev.VolumeStore store(String name) {
        return rbd.has(name) ? rbd.pool(name) : pool(name);
    }

    private ReflinkPool pool(String name) {
        ReflinkPool p = pools.get(name);
        if (p == null) {
            throw ControlException.notFound("no pool " + name);
        }
        return p;
    }

    /** Runs a pool operation; its refusal becomes invalid, naming {@code field} unless it names itself. */
    static <T> T call(java.util.function.Supplier<T> op, String field) {
        try {
            return op.get();
        } catch (BdevException e) {
            throw ControlException.invalid(field + ": " + e.getMessage());
        }
    }
}
