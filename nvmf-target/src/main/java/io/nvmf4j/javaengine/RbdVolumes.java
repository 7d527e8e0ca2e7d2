package io.nvmf4j.javaengine;

import io.nvmf4j.ControlException;
import io.nvmf4j.bdev.BlockDevice;
import io.nvmf4j.bdev.RbdBdev;
import io.nvmf4j.bdev.RbdPool;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.TargetConfig;
import io.nvmf4j.config.VolumeConfig;
import io.nvmf4j.engine.PoolInfo;
import io.nvmf4j.storage.BdevException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The java engine's rbd pools ({@link RbdPool}) and the volumes it serves from them, each open as an {@link RbdBdev}
 * named {@code <pool>/<volume>}; the rbd half of {@link JavaPools}, which dispatches to it by pool, opens, resizes and
 * deletes its volumes as any pool's ({@link io.nvmf4j.bdev.VolumeStore}) and lends it its write hold for snapshots.
 * Called holding the engine's monitor.
 *
 * <p>Undo and durability: a volume's delete moves its image to RBD's trash, restored when the document is not
 * saved and removed once it is durable ({@link #settle}); a snapshot's delete is done at {@link #settle} only (RBD
 * has no trash for a user snapshot), so a delete whose document is not saved leaves the snapshot as it was. A create,
 * snapshot or clone is undone by removing what it made.
 */
final class RbdVolumes {
    private static final Logger LOG = LoggerFactory.getLogger(RbdVolumes.class);

    private final JavaPools.Engine engine;
    private final JavaPools javaPools;
    private final Map<String, RbdPool> pools = new LinkedHashMap<>();
    private final Map<String, RbdPool.Reconciled> reconciled = new HashMap<>();
    /** Snapshot deletes the document holds but RBD does not yet: pool → {@code volume@snapshot}, done at settle. */
    private final Map<String, List<String>> snapshotsToRemove = new HashMap<>();
    /** Called with each volume's name after its snapshot in a group, before the next (tests only). */
    private volatile java.util.function.Consumer<String> groupStep = v -> { };

    RbdVolumes(JavaPools.Engine engine, JavaPools javaPools) {
        this.engine = engine;
        this.javaPools = javaPools;
    }

    boolean has(String pool) {
        return pools.containsKey(pool);
    }

    /** At start: opens the pool, reports what the RADOS pool and the document disagree on, opens the volumes. */
    void open(PoolConfig p) {
        RbdPool pool = RbdPool.open(p);
        pools.put(p.name, pool);
        RbdPool.Reconciled r = pool.reconcile(p);
        reconciled.put(p.name, r);
        for (VolumeConfig v : p.volumes) {
            for (io.nvmf4j.config.SnapshotConfig s : v.snapshots) {
                if (r.missing().contains(v.name + "@" + s.name)) {
                    engine.missing().add(p.name, v.name, s.name, "image " + v.name + " of RADOS pool " + p.pool
                        + " has no snapshot " + s.name);
                }
            }
            if (r.missing().contains(v.name)) {
                engine.missing().add(p.name, v.name, null, "RADOS pool " + p.pool + " has no image " + v.name);
            } else {
                javaPools.openVolume(p.name, v);
            }
        }
        LOG.info("pool {}: {} volume(s) in RADOS pool {}{}{}{}{}", p.name, p.volumes.size(), p.pool,
            r.missing().isEmpty() ? "" : "; missing " + r.missing(), r.unknown().isEmpty() ? ""
                : "; not in the configuration " + r.unknown(), r.restored().isEmpty() ? ""
                : "; restored from RBD's trash " + r.restored(), r.removed().isEmpty() ? ""
                : "; removed from RBD's trash (deletes committed) " + r.removed());
    }

    /** What the start found (null for a pool added since). */
    RbdPool.Reconciled reconciled(String pool) {
        return reconciled.get(pool);
    }

    /** Adds a pool: its RADOS pool must hold no image (they would be taken for volumes). */
    void addPool(PoolConfig p) {
        RbdPool pool = JavaPools.call(() -> RbdPool.open(p), "pool");
        List<String> images;
        try {
            images = pool.images();
        } catch (BdevException e) {
            pool.close();
            throw ControlException.invalid("pool: " + e.getMessage());
        }
        if (!images.isEmpty()) {
            pool.close();
            throw ControlException.invalid("pool: RADOS pool " + p.pool + " holds images already " + images
                + "; an rbd pool needs a RADOS pool without them");
        }
        pools.put(p.name, pool);
        LOG.info("pool {}: added on RADOS pool {}", p.name, p.pool);
    }

    void removePool(PoolConfig p) {
        RbdPool pool = pools.remove(p.name);
        if (pool != null) {
            pool.close();
        }
        reconciled.remove(p.name);
    }

    PoolInfo info(PoolConfig p) {
        RbdPool pool = pool(p.name);
        RbdPool.Capacity c = JavaPools.call(pool::capacity, "pool");
        return new PoolInfo(p.name, p.kind, p.pool, c.size(), c.used(), c.free(), p.warnPercentOrDefault(),
            pool.watermarkCrossings(), p.volumes.size());
    }

    /** Creates the volume's image, thick when asked (a failure there removes the image: 400 naming thick). */
    void createVolume(String poolName, VolumeConfig v) {
        RbdPool pool = pool(poolName);
        JavaPools.call(() -> {
            pool.createVolume(v);
            return null;
        }, "name");
        if (v.thick) {
            JavaPools.call(() -> {
                pool.provisionThick(v);
                return null;
            }, "thick");
        }
        javaPools.openOrDiscard(poolName, v);
    }

    void cloneSnapshot(String poolName, String volume, String snapshot, VolumeConfig clone) {
        RbdPool pool = pool(poolName);
        JavaPools.call(() -> {
            pool.cloneSnapshot(volume, snapshot, clone.name);
            return null;
        }, "name");
        javaPools.openOrDiscard(poolName, clone);
    }

    /** Before a volume's image goes to the trash, the deleted snapshots it still has go (an image keeps them). */
    void beforeDelete(String poolName, String volume) {
        List<String> l = snapshotsToRemove.getOrDefault(poolName, List.of());
        for (String s : List.copyOf(l)) {
            if (s.startsWith(volume + "@")) {
                removeSnapshot(poolName, volume, s.substring(volume.length() + 1));
                l.remove(s);
            }
        }
    }

    /** Marks the snapshot for removal at {@link #settle} (see the class comment). */
    void deleteSnapshot(String poolName, String volume, String snapshot) {
        snapshotsToRemove.computeIfAbsent(poolName, k -> new ArrayList<>()).add(volume + "@" + snapshot);
    }

    void restoreSnapshot(String poolName, String volume, String snapshot) {
        List<String> l = snapshotsToRemove.get(poolName);
        if (l != null) {
            l.remove(volume + "@" + snapshot);
        }
    }

    /** The undo of a snapshot: removes the RBD snapshot of each volume now. */
    void discardSnapshots(String poolName, List<String> volumes, String snapshot) {
        for (String v : volumes) {
            removeSnapshot(poolName, v, snapshot);
        }
    }

    /**
     * RBD snapshot {@code snapshot} of each of {@code volumes} inside {@link JavaPools#withWritesHeld}: librbd's
     * acknowledged writes flushed (rbd_flush), then rbd_snap_create on the bdev's own image handle. A failure removes
     * the snapshots made so far.
     *
     * <p>A group (several volumes) is one instant for every client of the images, not only for this gateway, through
     * RBD's exclusive lock, which a client must own to write: before the first snapshot no other client may own the
     * lock of any volume (each image must have the feature), and after the last one this gateway's handle must still
     * own every lock. A volume's snapshot makes its handle the owner, and with its writes held nothing makes the handle
     * take the lock again once it lost it; so a handle that owns the lock at the end owned it from its volume's snapshot on, and no other
     * client wrote to that volume in between: the snapshots together are the volumes as of the last one. A lock
     * taken away meanwhile (another client wrote, or asked to) undoes them all (conflict: try again).
     */
    long snapshot(String poolName, List<String> volumes, String snapshot) {
        List<String> made = new ArrayList<>();
        boolean group = volumes.size() > 1;
        return javaPools.withWritesHeld(poolName, volumes, snapshot, devices -> {
            try {
                if (group) {
                    noOtherWriter(poolName, volumes, devices);
                }
                for (int i = 0; i < volumes.size(); i++) {
                    RbdBdev d = (RbdBdev) devices.get(i);
                    d.flushAcknowledged();
                    d.createSnapshot(snapshot);
                    made.add(volumes.get(i));
                    if (group) {
                        groupStep.accept(volumes.get(i));
                    }
                }
                if (group) {
                    stillSoleWriter(poolName, volumes, devices);
                }
            } catch (IOException e) {
                discardSnapshots(poolName, made, snapshot);
                throw ControlException.conflict(e.getMessage() + "; no snapshot taken");
            } catch (RuntimeException e) {
                discardSnapshots(poolName, made, snapshot);
                throw e;
            }
        });
    }

    /** Conflict unless every volume's image has the exclusive-lock feature and no other client owns the lock. */
    private static void noOtherWriter(String poolName, List<String> volumes, List<BlockDevice> devices)
        throws IOException {
        for (int i = 0; i < volumes.size(); i++) {
            RbdBdev d = (RbdBdev) devices.get(i);
            if (!d.hasExclusiveLockFeature()) {
                throw ControlException.conflict("volumes: volume " + volumes.get(i) + " of pool " + poolName
                    + ": its image has no exclusive-lock feature, so nothing shows whether another client writes to"
                    + " it during a group snapshot; enable it (rbd feature enable <pool>/<image> exclusive-lock) or"
                    + " snapshot the volume on its own; no snapshot taken");
            }
            String owner = d.otherLockOwner();
            if (owner != null) {
                throw ControlException.conflict("volumes: volume " + volumes.get(i) + " of pool " + poolName
                    + ": another client (" + owner + ") owns the exclusive lock of its image and may write to it,"
                    + " which this gateway cannot hold for a group snapshot; serve the volume through this gateway"
                    + " alone or snapshot it on its own; no snapshot taken");
            }
        }
    }

    /** Conflict when some volume's lock left this gateway's handle since its snapshot (see {@link #snapshot}). */
    private static void stillSoleWriter(String poolName, List<String> volumes,
                                        List<BlockDevice> devices) throws IOException {
        for (int i = 0; i < volumes.size(); i++) {
            RbdBdev d = (RbdBdev) devices.get(i);
            if (!d.ownsExclusiveLock()) {
                String owner = d.otherLockOwner();
                throw ControlException.conflict("volumes: volume " + volumes.get(i) + " of pool " + poolName
                    + ": another client" + (owner == null ? "" : " (" + owner + ")") + " took the exclusive lock of"
                    + " its image during the group snapshot (it wrote to it or asked to), so the snapshots would not"
                    + " show one instant; none kept, try again");
            }
        }
    }

    /** See {@link JavaEngine#rbdGroupSnapshotStep}. */
    void groupStep(java.util.function.Consumer<String> step) {
        this.groupStep = step;
    }

    /** The bytes of the image's own objects; 0 for an image the start found missing (it is reported there). */
    long allocatedBytes(String poolName, String volume, String snapshot) {
        RbdPool.Reconciled r = reconciled.get(poolName);
        if (r != null && r.missing().contains(snapshot == null ? volume : volume + "@" + snapshot)) {
            return 0;
        }
        return JavaPools.call(() -> pool(poolName).allocatedBytes(volume, snapshot), "name");
    }

    /** The document is durable: the snapshots it dropped go, and the images in RBD's trash with them. */
    void settle() {
        for (Map.Entry<String, List<String>> e : snapshotsToRemove.entrySet()) {
            for (String s : List.copyOf(e.getValue())) {
                int at = s.indexOf('@');
                removeSnapshot(e.getKey(), s.substring(0, at), s.substring(at + 1));
                e.getValue().remove(s);
            }
        }
        for (RbdPool p : pools.values()) {
            List<String> removed = p.emptyTrash();
            if (!removed.isEmpty()) {
                LOG.info("pool {}: removed image(s) {}", p.name(), removed);
            }
        }
    }

    private void removeSnapshot(String poolName, String volume, String snapshot) {
        BlockDevice d = engine.bdevs().get(VolumeConfig.bdevName(poolName, volume));
        try {
            if (d instanceof RbdBdev r) {
                r.removeSnapshot(snapshot);
            }
        } catch (IOException e) {
            LOG.warn("pool {}: cannot remove RBD snapshot {}@{}: {}", poolName, volume, snapshot, e.getMessage());
        }
    }

    void close() {
        for (RbdPool p : pools.values()) {
            p.close();
        }
        pools.clear();
    }

    RbdPool pool(String name) {
        RbdPool p = pools.get(name);
        if (p == null) {
            throw ControlException.notFound("no pool " + name);
        }
        return p;
    }
}
