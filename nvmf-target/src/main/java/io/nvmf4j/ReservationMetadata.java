package io.nvmf4j;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.bdev.RbdBdev;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.core.Reservation;
import io.nvmf4j.engine.ReservationInfo;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.IntConsumer;

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
 * state again before they acknowledge, so the command completes only once they check I/O against the new state.
 */
final class ReservationMetadata implements Reservation.Shared {
    /** The image metadata key. */
    static final String KEY = "nvmf4j.reservation";
    /** How long a change waits for the other targets to acknowledge that they read it. */
    static final int ANNOUNCE_TIMEOUT_MS = 5000;
    private static final ObjectMapper MAPPER = ConfigStore.mapper();
    private static final org.slf4j.Logger LOG = org.slf4j.LoggerFactory.getLogger(ReservationMetadata.class);

    private final RbdBdev bdev;
    private IntConsumer listener;

    private ReservationMetadata(RbdBdev bdev) {
        this.bdev = bdev;
    }

    /** The reservation kept in {@code bdev}'s image, read now and again whenever another target changes it. */
    static Reservation open(RbdBdev bdev) throws IOException {
        ReservationMetadata m = new ReservationMetadata(bdev);
        Reservation r = new Reservation(m);
        m.listener = err -> r.refresh();
        bdev.watchHeader(m.listener);
        return r;
    }

    @Override
    public Reservation.Kept read() throws IOException {
        byte[] raw = bdev.metadata(KEY);
        if (raw == null) {
            return new Reservation.Kept(Reservation.State.EMPTY, null);
        }
        try {
            return new Reservation.Kept(MAPPER.readValue(raw, ReservationInfo.class).toState(), raw);
        } catch (IOException | IllegalArgumentException e) {
            throw new IOException("the reservation kept in image " + bdev.options().pool() + "/"
                + bdev.options().image() + " (metadata " + KEY + ") is unreadable (" + e.getMessage() + "); fix or "
                + "remove it (rbd image-meta remove; that drops the namespace's registrations and reservation)", e);
        }
    }

    @Override
    public boolean compareAndSet(byte[] expected, Reservation.State next) throws IOException {
        byte[] value = MAPPER.writeValueAsString(ReservationInfo.of(next)).getBytes(StandardCharsets.UTF_8);
        return bdev.compareAndSetMetadata(KEY, expected, value);
    }

    @Override
    public void announce() throws IOException {
        if (!bdev.notifyHeader(ANNOUNCE_TIMEOUT_MS)) {
            LOG.warn("rbd bdev {}: a target watching {}/{} did not acknowledge the reservation change within {} ms"
                + " (it reads the state again when it opens the image)", bdev.name(), bdev.options().pool(),
                bdev.options().image(), ANNOUNCE_TIMEOUT_MS);
        }
    }

    @Override
    public void close() {
        bdev.unwatchHeader(listener);
    }
}
