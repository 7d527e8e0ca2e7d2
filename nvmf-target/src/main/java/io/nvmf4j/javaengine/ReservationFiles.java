package io.nvmf4j.javaengine;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.core.Reservation;
import io.nvmf4j.engine.ReservationInfo;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Where the reservation of a namespace with Persist Through Power Loss on is kept: one file per namespace in
 * the state directory, {@code reservation-<nguid>.json}, named by the namespace's NGUID (its identity, kept in
 * the configuration across restarts and unique in it). Written the way the configuration is (temporary file,
 * fsync, rename, fsync of the directory) before the command that changed it completes; removed when PTPL goes
 * off and when the namespace is removed through the API.
 */
final class ReservationFiles {
    private static final ObjectMapper MAPPER = ConfigStore.mapper();

    private ReservationFiles() {
    }

    static Path fileFor(Path stateDir, String nguid) {
        return stateDir.resolve("reservation-" + nguid.toLowerCase(java.util.Locale.ROOT) + ".json");
    }

    /**
     * The state kept in {@code file}, or null when there is none. A file that cannot be read is an error: starting
     * without a reservation a host relies on could let a fenced host write.
     */
    static Reservation.State load(Path file) throws IOException {
        if (!Files.exists(file)) {
            return null;
        }
        try {
            return ReservationStates.state(MAPPER.readValue(file.toFile(), ReservationInfo.class));
        } catch (IOException | IllegalArgumentException e) {
            throw new IOException("reservation state " + file + " is unreadable (" + e.getMessage() + "); fix or "
                + "remove the file (removing it drops the namespace's registrations and reservation)", e);
        }
    }

    static Reservation.Store store(Path file) {
        return new Reservation.Store() {
            @Override
            public void save(Reservation.State state) throws IOException {
                ConfigStore.writeAtomically(file, (MAPPER.writeValueAsString(ReservationStates.info(state)) + "\n")
                    .getBytes(java.nio.charset.StandardCharsets.UTF_8));
            }

            @Override
            public void delete() throws IOException {
                Files.deleteIfExists(file);
            }
        };
    }
}
