package io.nvmf4j.bdev;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Scratch directories for file bdev tests, under the module's {@code target/} directory (a real disk
 * filesystem, so O_DIRECT and hole punching have a chance; /tmp may be tmpfs).
 */
final class TestDirs {
    private TestDirs() {
    }

    static Path create(String prefix) throws IOException {
        Path base = Path.of("target", "test-files").toAbsolutePath();
        Files.createDirectories(base);
        return Files.createTempDirectory(base, prefix);
    }

    /** Deletes {@code dir} and everything below it. */
    static void delete(Path dir) throws IOException {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        }
    }
}
