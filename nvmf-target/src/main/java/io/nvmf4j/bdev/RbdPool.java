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
 * like them. A volume is an image (thin: RBD allocates its objects as they are written), a snapshot an RBD snapshot
 * {@code <volume>@<snapshot>}, a clone an RBD clone (format 2, so the parent snapshot needs no protection) of a
 * snapshot; the lineage is the document's, and RBD keeps its own too (an image with snapshots, or a snapshot with
 * clones, cannot go).
 *
 * <p>The pool keeps one client of the cluster for its control calls; each volume is served by an {@link RbdBdev} of
 * its own, opened as an rbd bdev opens its image (so the exclusive lock, the reservation and the fencing rules of rbd
 * bdevs hold). A deleted volume goes to RBD's trash ({@code rbd_trash_move}) until the document that dropped it is
 * durable ({@link #emptyTrash}), and comes back from it ({@code rbd_trash_restore}) when that document is not saved.
 * Control-plane threads only, serialised by the engine.
 */
public final class RbdPool implements VolumeStore, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(RbdPool.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The most images, trash entries or snapshots one listing takes (a pool of more is refused at listing). */
    private static final int MAX_LISTED = 65_536;

    /**
     * What the RADOS pool holds against the document, at start: images and snapshots it lacks, those it holds that
     * the document does not name (reported, nothing deleted), images brought back from RBD's trash, and images set
     * back to the document's size (a shrink whose document was written but whose resize did not run).
     */
    public record Reconciled(List<String> missing, List<String> unknown, List<String> restored, List<String> resized) {
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

    /** Opens volume {@code v}'s image as rbd bdev {@code bdevName}, as an rbd bdev of the document opens its image. */
    @Override
    public RbdBdev openVolume(String bdevName, VolumeConfig v) {
        return RbdBdev.open(bdevName, v.blockSize, v.numBlocks, new RbdBdev.Options(config.pool, v.name,
            config.cephConf, config.clientNameOrDefault(), config.keyring, false,
            BdevConfig.DEFAULT_RBD_TIMEOUT_SECONDS));
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

    /** Moves volume {@code volume}'s image to RBD's trash (undone by {@link #restoreVolume}). */
    @Override
    public void trashVolume(String volume) {
        byte[] id = new byte[128];
        int n = check("move image " + volume + " to the trash", RbdNative.trashMove(ioctx, volume, id));
        trashed.put(volume, new String(id, 0, Math.min(n, id.length), StandardCharsets.US_ASCII));
    }

    /** Brings volume {@code volume}'s image back from RBD's trash. */
    @Override
    public void restoreVolume(String volume) {
        String id = trashed.remove(volume);
        if (id == null) {
            throw refused("image " + volume + " is not in the trash");
        }
        check("restore image " + volume + " from the trash", RbdNative.trashRestore(ioctx, id, volume));
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
     * Compares the RADOS pool with the document's pool {@code p}, at start: an image the document names that sits in
     * RBD's trash comes back (a delete whose document was never committed); images and snapshots the document names
     * that Ceph lacks, and images Ceph holds that the document does not name, are logged and returned. Nothing is
     * deleted.
     */
    public Reconciled reconcile(PoolConfig p) {
        List<String> restored = restoreUncommitted(p);
        List<String> images = images();
        List<String> missing = new ArrayList<>();
        List<String> unknown = new ArrayList<>();
        List<String> resized = new ArrayList<>();
        for (VolumeConfig v : p.volumes) {
            if (!images.contains(v.name)) {
                missing.add(v.name);
                continue;
            }
            if (shrinkToDocument(v)) {
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
        return new Reconciled(missing, unknown, restored, resized);
    }

    /**
     * Sets an image larger than the document's size back to it: the document of a shrink is written before the
     * image is resized. (A smaller image grows when its bdev opens, as an rbd bdev's does.)
     */
    private boolean shrinkToDocument(VolumeConfig v) {
        long want = v.numBlocks * v.blockSize;
        long image = RbdNative.open(ioctx, v.name);
        check("open image " + v.name, image);
        try {
            long size = check("read the size of image " + v.name, RbdNative.size(image));
            if (size <= want) {
                return false;
            }
            LOG.warn("pool {}: image {} holds {} bytes, the configuration says {} (a shrink that did not complete):"
                + " set back to {}", name, v.name, size, want, want);
            check("resize image " + v.name + " to " + want + " bytes", RbdNative.resize(image, want));
            return true;
        } finally {
            RbdNative.close(image);
        }
    }

    private List<String> restoreUncommitted(PoolConfig p) {
        String[] ids = new String[MAX_LISTED];
        String[] names = new String[MAX_LISTED];
        int n = check("list RBD's trash of RADOS pool " + config.pool, RbdNative.listTrash(ioctx, ids, names));
        List<String> present = images();
        List<String> restored = new ArrayList<>();
        for (int k = 0; k < Math.min(n, ids.length); k++) {
            if (p.volume(names[k]) != null && !present.contains(names[k])) {
                LOG.warn("pool {}: restoring image {} from RBD's trash: its delete was never committed", name,
                    names[k]);
                check("restore image " + names[k], RbdNative.trashRestore(ioctx, ids[k], names[k]));
                restored.add(names[k]);
            }
        }
        return restored;
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
