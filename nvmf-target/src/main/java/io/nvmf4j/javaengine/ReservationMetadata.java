package io.nvmf4j.javaengine;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.nvmf4j.bdev.RbdBdev;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.core.Reservation;
import io.nvmf4j.engine.ReservationInfo;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * Where the reservation of a namespace on an rbd bdev is kept: in the image, as its metadata
 * {@value #KEY} (JSON, as the state files of {@link ReservationFiles}; {@code rbd image-meta get} shows it), so
 * every target serving the image shares one reservation and a host's registration and reservation hold whichever
 * path it comes through.
 *
 * <p>Two targets change it concurrently without losing an update: a change is a compare-and-set of the value on
 * the image's header object (RbdBdev#compareAndSetMetadata: one OSD operation that compares the key's value with
 * the bytes the command read and writes the new one only if they match), and a command that lost the race reads
 * again and runs again (Reservation#run). After a change the target notifies the header object and waits (up to
 * {@value #ANNOUNCE_TIMEOUT_MS} ms) until every watcher acknowledged; the other targets watch it and read the
 * state again before they acknowledge (and, when the change takes access away from a host, drain the commands that
 * were executing on the namespace first), so the command completes only once they check I/O against the new state.
 * A watcher that did not acknowledge in time is fenced: its client is blocklisted (the address from the header's
 * watchers list), so none of its operations reaches the OSDs any more; a change is announced once every watcher
 * acknowledged or was blocklisted, never on the timeout alone.
 *
 * <p>Persist Through Power Loss: the state is kept in the image whatever PTPL says, because one target's restart is
 * no power loss of a namespace the others still serve. When a target opens the namespace and no other client
 * watches the image's header (every target serving it watches it; RbdBdev#watchedByOthers), every path was down:
 * with PTPL off the registrations and the reservation are cleared then (Reservation#powerLoss), as a power loss
 * clears them; with PTPL on they stay. A target that died keeps its watch until Ceph times it out
 * ({@code osd_client_watch_timeout}, 30 s by default), so one that starts before that keeps them too.
 *
 * <p>Notices travel with the state: the value also holds {@value #NOTICES}, the latest {@value #JOURNAL} notices
 * the changes caused ({@code {"last": n, "pages": [{"hostid", "type"}, ...]}}, oldest first, the last numbered
 * {@code n}). The target that made a change tells its own controllers; every other target, when it reads the
 * value (the watch's callback, its next command, a watch made again), tells its controllers of the notices
 * numbered after the last it had seen (Reservation#adopt). A notice is thus posted once per controller whichever
 * target a host is connected through, and one that a missed announcement would lose is found at the next read.
 */
final class ReservationMetadata implements Reservation.Shared {
    /** The image metadata key. */
    static final String KEY = "nvmf4j.reservation";
    /** How long a change waits for the other targets to acknowledge that they read it. */
    static final int ANNOUNCE_TIMEOUT_MS = 5000;
    /** The field of the value that holds the journal of notices, and how many notices it keeps. */
    static final String NOTICES = "notices";
    static final int JOURNAL = 64;
    private static final ObjectMapper MAPPER = ConfigStore.mapper();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ReservationMetadata.class);

    private final RbdBdev bdev;
    private RbdBdev.HeaderListener listener;

    private ReservationMetadata(RbdBdev bdev) {
        this.bdev = bdev;
    }

    /** The reservation kept in {@code bdev}'s image, read now and again whenever another target changes it. */
    static Reservation open(RbdBdev bdev) throws IOException {
        return open(bdev, () -> { });
    }

    /**
     * {@link #open(RbdBdev)}, running {@code betweenWatchAndRead} after the header is watched and before the state
     * is read. Watch first, then read: a change another target makes after the read announces itself to the watch;
     * one made before it is in what is read. A notification that arrives before the reservation exists (between
     * the two steps, or during the read) is remembered and answered with one more read once it does.
     */
    static Reservation open(RbdBdev bdev, Runnable betweenWatchAndRead) throws IOException {
        ReservationMetadata m = new ReservationMetadata(bdev);
        Reservation[] opened = new Reservation[1];
        boolean[] missed = new boolean[1];
        m.listener = (event, done) -> {
            Reservation r;
            synchronized (opened) {
                r = opened[0];
                missed[0] |= r == null;
            }
            if (r == null) {
                done.run(); // no command was checked against a state yet
                return;
            }
            r.refresh(event == RbdBdev.HeaderEvent.RECONNECTED, done);
        };
        bdev.watchHeader(m.listener);
        Reservation r;
        try {
            betweenWatchAndRead.run();
            r = new Reservation(m);
        } catch (IOException | RuntimeException e) {
            bdev.unwatchHeader(m.listener);
            throw e;
        }
        boolean again;
        synchronized (opened) {
            opened[0] = r;
            again = missed[0];
        }
        if (again) {
            r.refresh();
        }
        clearAfterPowerLoss(bdev, r);
        return r;
    }

    /**
     * Clears the registrations of a namespace whose PTPL is off when no other client watches the image: no target
     * served it, so every path went down (a power loss of the namespace). Checked after this target watches and
     * read the state, so of two targets starting together at least one sees the other's watch; a target that cannot
     * tell (the listing fails) keeps the state.
     */
    private static void clearAfterPowerLoss(RbdBdev bdev, Reservation r) {
        Reservation.State s = r.state();
        if (s.ptpl || (s.registrants() == 0 && s.rtype == 0)) {
            return;
        }
        try {
            if (bdev.watchedByOthers()) {
                return;
            }
        } catch (IOException e) {
            LOG.warn("rbd bdev {}: cannot tell whether another target serves {}/{} ({}); its reservation stays",
                bdev.name(), bdev.options().pool(), bdev.options().image(), e.getMessage());
            return;
        }
        if (r.powerLoss()) {
            LOG.info("rbd bdev {}: no other target serves {}/{} and PTPL is off: its {} registration(s) and"
                + " reservation are cleared, as after a power loss", bdev.name(), bdev.options().pool(),
                bdev.options().image(), s.registrants());
        }
    }

    /** The journal of notices kept with the state: {@code pages} oldest first, the last of them numbered {@code last}. */
    record Journal(long last, List<Page> pages) {
    }

    /** One notice: its type (Reservation.NOTICE_*) for every controller of host {@code hostid} (32 hex digits). */
    record Page(String hostid, int type) {
    }

    @Override
    public Reservation.Kept read() throws IOException {
        byte[] raw = bdev.metadata(KEY);
        if (raw == null) {
            return new Reservation.Kept(Reservation.State.EMPTY, null);
        }
        try {
            return parse(raw);
        } catch (IOException | IllegalArgumentException | ClassCastException e) {
            throw new IOException("the reservation kept in image " + bdev.options().pool() + "/"
                + bdev.options().image() + " (metadata " + KEY + ") is unreadable (" + e.getMessage() + "); fix or "
                + "remove it (rbd image-meta remove; that drops the namespace's registrations and reservation)", e);
        }
    }

    /** The state and journal of a value (a value without {@value #NOTICES}, from before the journal: none). */
    static Reservation.Kept parse(byte[] raw) throws IOException {
        ObjectNode node = (ObjectNode) MAPPER.readTree(raw);
        JsonNode notices = node.remove(NOTICES);
        Reservation.State state = ReservationStates.state(MAPPER.treeToValue(node, ReservationInfo.class));
        if (notices == null || notices.isNull()) {
            return new Reservation.Kept(state, raw);
        }
        Journal j = MAPPER.treeToValue(notices, Journal.class);
        List<Reservation.Notice> pages = new ArrayList<>();
        for (Page p : j.pages() == null ? List.<Page>of() : j.pages()) {
            if (p.type() < Reservation.NOTICE_REGISTRATION_PREEMPTED || p.type() > Reservation.NOTICE_RESERVATION_PREEMPTED) {
                throw new IllegalArgumentException(NOTICES + ": notice type " + p.type() + " is not 1-3");
            }
            if (p.hostid() == null || !p.hostid().matches("[0-9a-fA-F]{32}")) {
                throw new IllegalArgumentException(NOTICES + ": hostid: 32 hex digits expected");
            }
            pages.add(new Reservation.Notice(Long.parseUnsignedLong(p.hostid().substring(0, 16), 16),
                Long.parseUnsignedLong(p.hostid().substring(16), 16), p.type()));
        }
        return new Reservation.Kept(state, raw, j.last(), pages);
    }

    /** The value that holds {@code next} and the journal of {@code before} with {@code notices} added. */
    static byte[] format(Reservation.Kept before, Reservation.State next, List<Reservation.Notice> notices)
        throws IOException {
        ObjectNode node = MAPPER.valueToTree(ReservationStates.info(next));
        List<Reservation.Notice> all = new ArrayList<>(before.notices());
        all.addAll(notices);
        List<Page> pages = new ArrayList<>();
        for (Reservation.Notice n : all.subList(Math.max(0, all.size() - JOURNAL), all.size())) {
            pages.add(new Page(HexFormat.of().toHexDigits(n.hostHi()) + HexFormat.of().toHexDigits(n.hostLo()),
                n.type()));
        }
        long last = before.noticeSeq() + notices.size();
        if (last > 0) {
            node.set(NOTICES, MAPPER.valueToTree(new Journal(last, pages)));
        }
        return MAPPER.writeValueAsBytes(node);
    }

    @Override
    public Reservation.Kept compareAndSet(Reservation.Kept expected, Reservation.State next,
                                          List<Reservation.Notice> notices) throws IOException {
        byte[] value = format(expected, next, notices);
        return bdev.compareAndSetMetadata(KEY, expected.raw(), value) ? parse(value) : null;
    }

    /**
     * Notifies the header and waits for every watcher's acknowledgement (up to {@value #ANNOUNCE_TIMEOUT_MS} ms); each
     * watcher that did not acknowledge (a gateway killed, stopped, cut off, or one whose drain outlasted the timeout)
     * is blocklisted. Throws when one could not be (its address unknown, the monitor refused or did not answer).
     */
    @Override
    public void announce() throws IOException {
        List<RbdBdev.Watcher> late = bdev.notifyHeader(ANNOUNCE_TIMEOUT_MS);
        IOException failed = null;
        for (RbdBdev.Watcher w : late) {
            LOG.warn("rbd bdev {}: client.{} ({}), a watcher of {}/{}, did not acknowledge the reservation change"
                + " within {} ms: fencing it", bdev.name(), w.clientId(), w.address(), bdev.options().pool(),
                bdev.options().image(), ANNOUNCE_TIMEOUT_MS);
            try {
                bdev.blocklist(w);
            } catch (IOException e) {
                LOG.error("{}", e.getMessage());
                if (failed == null) {
                    failed = e;
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    /** librbd may have acknowledged writes of the drained commands that are still on their way to the OSDs. */
    @Override
    public void settle() throws IOException {
        bdev.flushAcknowledged();
    }

    @Override
    public void close() {
        bdev.unwatchHeader(listener);
    }
}
