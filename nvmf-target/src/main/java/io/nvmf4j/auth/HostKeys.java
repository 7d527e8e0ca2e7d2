package io.nvmf4j.auth;

import java.io.IOException;

/**
 * The keys one host authenticates with, read from their files when a controller is created and again at each
 * re-authentication on its admin queue (so a rotated file applies to the next authentication).
 *
 * @param host       the key the host proves it holds (its response R1 to challenge C1)
 * @param controller the key the controller proves it holds when the host sends a challenge C2, or null
 */
public record HostKeys(DhchapKey host, DhchapKey controller) {
    /** Reads the key files ({@code ctrlKeyFile} may be null). */
    public static HostKeys read(String keyFile, String ctrlKeyFile) throws IOException {
        return new HostKeys(KeyFiles.read(keyFile), ctrlKeyFile == null ? null : KeyFiles.read(ctrlKeyFile));
    }
}
