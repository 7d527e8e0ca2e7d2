package io.nvmf4j.bdev;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.config.BdevConfig;
import io.nvmf4j.config.PoolConfig;
import io.nvmf4j.config.SnapshotConfig;
import io.nvmf4j.config.VolumeConfig;
import io.nvmf4j.storage.BdevException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The java engine's pool on Ceph ({@link PoolConfig#KIND_RBD}): a RADOS pool whose RBD images are the volumes, named
 * like them. A volume is an image (thin: RBD allocates its objects as they are written; thick: zeros written over it
 * at creation, {@link #provisionThick}), a snapshot an RBD snapshot {@code <volume>@<snapshot>}, a clone an RBD clone
 * (format 2, so the parent snapshot needs no protection) of a snapshot; the lineage is the document's, and RBD keeps
 * its own too (an image with snapshots, or a snapshot with clones, cannot go).
 *
 * <p>The pool keeps one client of the cluster for its control calls; each volume is served by an {@link RbdBdev} of
 * its own, opened as an rbd bdev opens its image (so the exclusive lock, the reservation and the fencing rules of rbd
 * bdevs hold). A deleted volume goes to RBD's trash ({@code rbd_trash_move}) until the document that dropped it is
 * durable ({@link #emptyTrash}), and comes back from it ({@code rbd_trash_restore}) when that document is not saved.
 * Each trash move is recorded in the RADOS pool's RBD metadata ({@link #TRASH_KEY}) until the image left the trash,
 * so that a start after a stop between the durable document and the removal finishes the removal ({@link #reconcile}).
 * Control-plane threads only, serialised by the engine.
 */
public final class RbdPool implements VolumeStore, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RbdPool.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The most images, trash entries or snapshots one listing takes (a pool of more is refused at listing). */
    private static final int MAX_LISTED = 65_536;
    /**
     * The prefix of the RADOS pool's RBD metadata keys ({@code rbd_pool_metadata_set}) that record our trash moves:
     * {@code nvmf4j.trash.<image id>} = the volume's name, set before {@code rbd_trash_move} and removed after
     * {@code rbd_trash_remove} or {@code rbd_trash_restore}. A trash entry without one is not ours.
     */
    public static final String TRASH_KEY = "nvmf4j.trash.";

    /**
     * What the RADOS pool holds against the document, at start: images and snapshots it lacks, those it holds that
     * the document does not name (reported, nothing deleted), images brought back from RBD's trash, images set to
     * the document's size (a shrink, or a thick volume's grow, whose document was written but whose resize did not
     * run), and images removed from RBD's trash (deletes the document committed whose removal had not run:
     * {@link #TRASH_KEY}).
     */
    public record Reconciled(List<String> missing, List<String> unknown, List<String> restored, List<String> resized,
                             List<String> removed) {
    }

    /**
     * The RADOS pool's figures as the monitors give them ({@code ceph df}): bytes stored in it, and the bytes it can
     * still take (MAX AVAIL: the OSDs' free space after replication and the full ratio).
     */
    public record Capacity(long size, long used, long free) {
        public double usedPercent() {
            return size == 0 ? 0 : 100.0 * used / size;
        }
    }

    private final String name;
    private final PoolConfig config;
    private final long cluster;
    private final long ioctx;
    /** Deleted volumes in RBD's trash until the document is durable: volume name → image id. */
    private final Map<String, String> trashed = new HashMap<>();
    private final int warnPercent;
    /** Whether the last df lacked the pool (warned once until it has it). */
    private boolean figuresMissing;
    private boolean aboveWatermark;
    private final java.util.concurrent.atomic.AtomicLong watermarkCrossings = new java.util.concurrent.atomic.AtomicLong();

    private RbdPool(PoolConfig config, long cluster, long ioctx) {
        this.name = config.name;
        this.config = config;
        this.cluster = cluster;
        this.ioctx = ioctx;
        this.warnPercent = config.warnPercentOrDefault();
    }

    /** Connects to the cluster and opens RADOS pool {@code p.pool}: refused with Ceph's reason. */
    public static RbdPool open(PoolConfig p) {
        RbdNative.ensureLoaded("pool " + p.name);
        long cluster = RbdNative.connect(p.cephConf, p.clientNameOrDefault(), p.keyring,
            BdevConfig.DEFAULT_RBD_TIMEOUT_SECONDS, BdevConfig.DEFAULT_RBD_OSD_OP_TIMEOUT_SECONDS, false);
        if (cluster < 0) {
            throw new BdevException("pool " + p.name + ": cannot connect to the Ceph cluster of " + p.cephConf + " as "
                + p.clientNameOrDefault() + ": " + RbdNative.strerror((int) cluster));
        }
        long ioctx = RbdNative.openPool(cluster, p.pool);
        if (ioctx < 0) {
            RbdNative.shutdown(cluster);
            throw new BdevException("pool " + p.name + ": cannot open RADOS pool '" + p.pool + "': "
                + RbdNative.strerror((int) ioctx));
        }
        return new RbdPool(p, cluster, ioctx);
    }

    public String name() {
        return name;
    }

    public long watermarkCrossings() {
        return watermarkCrossings.get();
    }

    /** The images the RADOS pool holds now. */
    public List<String> images() {
        String[] names = new String[MAX_LISTED];
        int n = check("list the images of RADOS pool " + config.pool, RbdNative.listImages(ioctx, names));
        List<String> out = new ArrayList<>(Arrays.asList(names).subList(0, Math.min(n, names.length)));
        out.sort(null);
        return out;
    }

    /** The pool's figures from the monitors' {@code df}; checks the warning watermark (logged once, counted). */
    public Capacity capacity() {
        byte[] out = new byte[1 << 20];
        int n = check("read the cluster's df", RbdNative.monCommand(cluster, "{\"prefix\":\"df\",\"format\":\"json\"}",
            out));
        try {
            JsonNode df = JSON.readTree(new String(out, 0, Math.min(n, out.length), StandardCharsets.UTF_8));
            for (JsonNode p : df.path("pools")) {
                if (config.pool.equals(p.path("name").asText())) {
                    long stored = p.path("stats").path("stored").asLong(p.path("stats").path("bytes_used").asLong());
                    long avail = p.path("stats").path("max_avail").asLong();
                    Capacity c = new Capacity(stored + avail, stored, avail);
                    figuresMissing = false;
                    checkWatermark(c);
                    return c;
                }
            }
        } catch (java.io.IOException e) {
            throw refused("the monitors' df is not JSON: " + e.getMessage());
        }
        if (!figuresMissing) {
            LOG.warn("pool {}: the monitors' df has no figures of RADOS pool {} (yet): its size, used and free bytes"
                + " read 0 until the cluster's manager (ceph-mgr) reports them", name, config.pool);
            figuresMissing = true;
        }
        return new Capacity(0, 0, 0);
    }

    private void checkWatermark(Capacity c) {
        boolean above = c.usedPercent() >= warnPercent;
        if (above && !aboveWatermark) {
            watermarkCrossings.incrementAndGet();
            LOG.warn("pool {}: {}% of {} bytes in use, above its warning watermark of {}% ({} bytes free)", name,
                String.format("%.1f", c.usedPercent()), c.size(), warnPercent, c.free());
        }
        aboveWatermark = above;
    }

    /** Creates the image of volume {@code v} (thin, 4 MiB objects, the pool's default features). */
    public void createVolume(VolumeConfig v) {
        int rc = RbdNative.create(ioctx, v.name, v.numBlocks * v.blockSize);
        if (rc == -RbdNative.EEXIST) {
            throw refused("image " + v.name + " exists already in RADOS pool " + config.pool);
        }
        check("create image " + v.name, rc);
    }

    /**
     * Makes the new image of volume {@code v} thick as {@code rbd create --thick-provision} does: zeros written over
     * all of it with writesame, an object at a time, then flushed, by this client, which keeps written zeros
     * ({@link RbdNative#thickProvision}); every object exists afterwards. When that fails the image is removed (no
     * half-made volume) and the cause thrown.
     */
    public void provisionThick(VolumeConfig v) {
        long bytes = v.numBlocks * v.blockSize;
        long image = RbdNative.open(ioctx, v.name);
        try {
            check("open image " + v.name, image);
            try {
                int rc = RbdNative.thickProvision(cluster, image, 0, bytes);
                if (rc < 0) {
                    throw refused("cannot write zeros over the " + bytes + " bytes of thick image " + v.name + ": "
                        + RbdNative.thickError(rc));
                }
            } finally {
                RbdNative.close(image);
            }
        } catch (BdevException e) {
            int rc = RbdNative.remove(ioctx, v.name);
            if (rc < 0 && rc != -RbdNative.ENOENT) {
                LOG.error("pool {}: cannot remove image {} after its thick provisioning failed: {}", name, v.name,
                    RbdNative.strerror(rc));
            }
            throw new BdevException(e.getMessage() + "; the image was removed");
        }
    }

    /**
     * Opens volume {@code v}'s image as rbd bdev {@code bdevName}, as an rbd bdev of the document opens its image; a
     * thick volume's bdev writes zeros over what a grow adds ({@link RbdBdev#growThick}), a thin one's reports its
     * allocation as NUSE ({@link RbdBdev#thinProvisioned(boolean)}).
     */
    @Override
    public RbdBdev openVolume(String bdevName, VolumeConfig v) {
        RbdBdev b = RbdBdev.open(bdevName, v.blockSize, v.numBlocks, new RbdBdev.Options(config.pool, v.name,
            config.cephConf, config.clientNameOrDefault(), config.keyring, false,
            BdevConfig.DEFAULT_RBD_TIMEOUT_SECONDS));
        if (v.thick) {
            b.growThick();
        }
        b.thinProvisioned(!v.thick);
        return b;
    }

    /** Sets the size of an image no bdev has open (a shrink). */
    @Override
    public void setVolumeSize(String volume, long bytes) {
        long image = RbdNative.open(ioctx, volume);
        check("open image " + volume, image);
        try {
            check("resize image " + volume + " to " + bytes + " bytes", RbdNative.resize(image, bytes));
        } finally {
            RbdNative.close(image);
        }
    }

    /** Clone: new image {@code clone} from RBD snapshot {@code volume@snapshot} (clone format 2). */
    public void cloneSnapshot(String volume, String snapshot, String clone) {
        check("clone " + volume + "@" + snapshot + " into " + clone, RbdNative.clone(ioctx, volume, snapshot, clone));
    }

    /**
     * Moves volume {@code volume}'s image to RBD's trash (undone by {@link #restoreVolume}), the move recorded first
     * ({@link #TRASH_KEY}; the record goes again when the move fails).
     */
    @Override
    public void trashVolume(String volume) {
        byte[] idOut = new byte[128];
        int n = check("read the id of image " + volume, RbdNative.imageId(ioctx, volume, idOut));
        String id = new String(idOut, 0, Math.min(n, idOut.length), StandardCharsets.US_ASCII);
        check("record the trash move of image " + volume + " in RADOS pool " + config.pool + "'s RBD metadata",
            RbdNative.poolMetadataSet(ioctx, TRASH_KEY + id, volume));
        int rc = RbdNative.trashMove(ioctx, volume);
        if (rc < 0) {
            dropTrashKey(id, volume);
            check("move image " + volume + " to the trash", rc);
        }
        trashed.put(volume, id);
    }

    /** Brings volume {@code volume}'s image back from RBD's trash. */
    @Override
    public void restoreVolume(String volume) {
        String id = trashed.remove(volume);
        if (id == null) {
            throw refused("image " + volume + " is not in the trash");
        }
        check("restore image " + volume + " from the trash", RbdNative.trashRestore(ioctx, id, volume));
        dropTrashKey(id, volume);
    }

    /** Removes the record of image {@code id}'s trash move; a failure is logged (the next start drops it). */
    private void dropTrashKey(String id, String volume) {
        int rc = RbdNative.poolMetadataRemove(ioctx, TRASH_KEY + id);
        if (rc < 0 && rc != -RbdNative.ENOENT) {
            LOG.warn("pool {}: cannot remove the record {}{} of image {} from RADOS pool {}'s RBD metadata: {} (the"
                + " next start drops it)", name, TRASH_KEY, id, volume, config.pool, RbdNative.strerror(rc));
        }
    }

    /** The recorded trash moves ({@link #TRASH_KEY}): image id → volume. */
    private Map<String, String> trashKeys() {
        String[] keys = new String[MAX_LISTED];
        String[] values = new String[MAX_LISTED];
        int n = check("list RADOS pool " + config.pool + "'s RBD metadata", RbdNative.poolMetadataList(ioctx, TRASH_KEY,
            keys, values));
        Map<String, String> out = new HashMap<>();
        for (int k = 0; k < Math.min(n, keys.length); k++) {
            out.put(keys[k].substring(TRASH_KEY.length()), values[k]);
        }
        return out;
    }

    /** Removes an image now: the undo of a create or clone that was never committed. */
    @Override
    public void discardVolume(String volume) {
        check("remove image " + volume, RbdNative.remove(ioctx, volume));
    }

    /** Removes the trashed images: the deletes the document has committed. */
    public List<String> emptyTrash() {
        List<String> removed = new ArrayList<>();
        for (Map.Entry<String, String> e : List.copyOf(trashed.entrySet())) {
            int rc = RbdNative.trashRemove(ioctx, e.getValue());
            if (rc < 0 && rc != -RbdNative.ENOENT) {
                LOG.warn("pool {}: cannot remove image {} (id {}) from RBD's trash: {}", name, e.getKey(),
                    e.getValue(), RbdNative.strerror(rc));
                continue;
            }
            trashed.remove(e.getKey());
            dropTrashKey(e.getValue(), e.getKey());
            removed.add(e.getKey());
        }
        return removed;
    }

    /** Bytes of the objects the image (or its snapshot) wrote itself: a clone's parent's are not counted. */
    public long allocatedBytes(String volume, String snapshot) {
        return check("read the allocation of " + volume + (snapshot == null ? "" : "@" + snapshot),
            RbdNative.allocatedBytes(ioctx, volume, snapshot));
    }

    /**
     * Compares the RADOS pool with the document's pool {@code p}, at start: RBD's trash first
     * ({@link #reconcileTrash}: a delete never committed comes back, a committed one whose removal did not run is
     * finished); images and snapshots the document names that Ceph lacks, and images Ceph holds that the document
     * does not name, are logged and returned. Nothing else is deleted.
     */
    public Reconciled reconcile(PoolConfig p) {
        List<String> restored = new ArrayList<>();
        List<String> removedFromTrash = new ArrayList<>();
        reconcileTrash(p, restored, removedFromTrash);
        List<String> images = images();
        List<String> missing = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        List<String> resized = new ArrayList<>();
        for (VolumeConfig v : p.volumes) {
            if (!images.contains(v.name)) {
                missing.add(v.name);
                continue;
            }
            if (sizeToDocument(v)) {
                resized.add(v.name);
            }
            List<String> snaps = snapshots(v.name);
            for (SnapshotConfig s : v.snapshots) {
                if (!snaps.contains(s.name)) {
                    missing.add(v.name + "@" + s.name);
                }
            }
            for (String s : snaps) {
                if (v.snapshot(s) == null) {
                    unknown.add(v.name + "@" + s);
                }
            }
        }
        for (String i : images) {
            if (p.volume(i) == null) {
                unknown.add(i);
            }
        }
        if (!missing.isEmpty()) {
            LOG.error("pool {}: the configuration names {} that RADOS pool {} lacks", name, missing, config.pool);
        }
        if (!unknown.isEmpty()) {
            LOG.warn("pool {}: RADOS pool {} holds {} that the configuration does not name; left alone", name,
                config.pool, unknown);
        }
        return new Reconciled(missing, unknown, restored, resized, removedFromTrash);
    }

    /**
     * Sets an image larger than the document's size back to it: the document of a shrink is written before the
     * image is resized. A smaller image of a thick volume is grown here and the range written with zeros (the document
     * of a grow is written before the image is resized, and no host has seen that range yet); a thin one grows when
     * its bdev opens, as an rbd bdev's does.
     */
    private boolean sizeToDocument(VolumeConfig v) {
        long want = v.numBlocks * v.blockSize;
        long image = RbdNative.open(ioctx, v.name);
        check("open image " + v.name, image);
        try {
            long size = check("read the size of image " + v.name, RbdNative.size(image));
            if (size == want || size < want && !v.thick) {
                return false;
            }
            LOG.warn("pool {}: image {} holds {} bytes, the configuration says {} (a {} that did not complete):"
                + " set to {}{}", name, v.name, size, want, size > want ? "shrink" : "grow", want,
                size > want ? "" : ", the range added written with zeros (a thick volume)");
            check("resize image " + v.name + " to " + want + " bytes", RbdNative.resize(image, want));
            if (size < want) {
                int rc = RbdNative.thickProvision(cluster, image, size, want - size);
                if (rc < 0) {
                    LOG.error("pool {}: cannot write zeros over the {} bytes added to thick image {}: {}; that range"
                        + " stays thin", name, want - size, v.name, RbdNative.thickError(rc));
                }
            }
            return true;
        } finally {
            RbdNative.close(image);
        }
    }

    /**
     * RBD's trash against the document, at start. An image the document names and the pool lacks comes back (a
     * delete whose document was never committed) into {@code restored}. An image whose trash move we recorded
     * ({@link #TRASH_KEY}) and that does not come back is removed into {@code removed}: its delete was committed and
     * the process stopped before the trash was emptied. A record whose image is no longer in the trash is dropped.
     * Trash entries without our record are someone else's and stay (a failed removal is logged and retried at the
     * next start).
     */
    private void reconcileTrash(PoolConfig p, List<String> restored, List<String> removed) {
        String[] ids = new String[MAX_LISTED];
        String[] names = new String[MAX_LISTED];
        int n = check("list RBD's trash of RADOS pool " + config.pool, RbdNative.listTrash(ioctx, ids, names));
        Map<String, String> recorded = trashKeys();
        List<String> present = images();
        for (int k = 0; k < Math.min(n, ids.length); k++) {
            boolean ours = recorded.remove(ids[k]) != null;
            if (p.volume(names[k]) != null && !present.contains(names[k])) {
                LOG.warn("pool {}: restoring image {} from RBD's trash: its delete was never committed", name,
                    names[k]);
                check("restore image " + names[k], RbdNative.trashRestore(ioctx, ids[k], names[k]));
                present.add(names[k]);
                restored.add(names[k]);
            } else if (ours) {
                int rc = RbdNative.trashRemove(ioctx, ids[k]);
                if (rc < 0 && rc != -RbdNative.ENOENT) {
                    LOG.error("pool {}: cannot remove image {} (id {}) from RBD's trash, whose delete was committed:"
                        + " {}; tried again at the next start", name, names[k], ids[k], RbdNative.strerror(rc));
                    continue;
                }
                LOG.warn("pool {}: removed image {} (id {}) from RBD's trash: its delete was committed and the stop"
                    + " came before the trash was emptied", name, names[k], ids[k]);
                removed.add(names[k]);
            } else {
                continue;
            }
            if (ours) {
                dropTrashKey(ids[k], names[k]);
            }
        }
        if (n > ids.length) {
            return; // a record not matched may belong to a trash entry not listed
        }
        for (Map.Entry<String, String> e : recorded.entrySet()) {
            LOG.info("pool {}: image {} (id {}) has left RBD's trash; its record is dropped", name, e.getValue(),
                e.getKey());
            dropTrashKey(e.getKey(), e.getValue());
        }
    }

    /** The image's user snapshots. */
    public List<String> snapshots(String volume) {
        String[] names = new String[MAX_LISTED];
        int n = check("list the snapshots of " + volume, RbdNative.listSnapshots(ioctx, volume, names));
        return new ArrayList<>(Arrays.asList(names).subList(0, Math.min(n, names.length)));
    }

    private BdevException refused(String why) {
        return new BdevException("pool " + name + ": " + why);
    }

    private int check(String what, int rc) {
        return (int) check(what, (long) rc);
    }

    private long check(String what, long rc) {
        if (rc < 0) {
            throw refused("cannot " + what + ": " + RbdNative.strerror((int) rc));
        }
        return rc;
    }

    @Override
    public void close() {
        RbdNative.closePool(ioctx);
        RbdNative.shutdown(cluster);
    }
}
