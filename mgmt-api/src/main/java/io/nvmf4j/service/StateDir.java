package io.nvmf4j.service;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Where the service keeps its state by default; nvmfctl looks for the API token there too. */
public final class StateDir {
    private StateDir() {
    }

    /** {@code /var/lib/nvmf4j} for root, {@code ~/.local/state/nvmf4j} otherwise. */
    public static Path defaultDir() {
        boolean root;
        try {
            root = ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue() == 0;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            root = "root".equals(System.getProperty("user.name"));
        }
        return root ? Path.of("/var/lib/nvmf4j")
            : Path.of(System.getProperty("user.home"), ".local", "state", "nvmf4j");
    }
}
