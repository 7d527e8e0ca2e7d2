package io.nvmf4j.auth;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Key files are checked and read through one descriptor: whatever is put in the path's place between the look and
 * the read (a symbolic link to a file anyone may read, a loose-mode file, a larger file) is refused or not read. The
 * race is made deterministic by {@link KeyFiles#race}, which changes the file system at each stage of a read.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class KeyFilesTest {
    @TempDir
    Path dir;
    private Path key;
    private Path loose;
    private final byte[] checked = secret(1);
    private final byte[] other = secret(2);

    @BeforeEach
    void files() throws IOException {
        key = write("key", DhchapKey.format(1, checked), "rw-------");
        loose = write("loose", DhchapKey.format(1, other), "rw-r--r--");
    }

    @AfterEach
    void noRace() {
        KeyFiles.race = stage -> { };
    }

    @Test
    void anOwnerOnlyRegularFileIsRead() throws IOException {
        assertThat(KeyFiles.read(key.toString()).secret()).isEqualTo(checked);
    }

    @Test
    void aSymbolicLinkALooseFileAFifoAndALargeFileAreRefused() throws Exception {
        Path link = Files.createSymbolicLink(dir.resolve("link"), key);
        assertThatThrownBy(() -> KeyFiles.read(link.toString()))
            .hasMessage("key file " + link + " is not a regular file (symbolic links are refused)");
        assertThatThrownBy(() -> KeyFiles.read(loose.toString())).hasMessageContaining("permissions 0644 are too open");
        Path fifo = dir.resolve("fifo");
        assertThat(new ProcessBuilder("mkfifo", "-m", "600", fifo.toString()).start().waitFor()).isZero();
        assertThatThrownBy(() -> KeyFiles.read(fifo.toString()))
            .hasMessage("key file " + fifo + " is not a regular file (symbolic links are refused)");
        Path large = write("large", "x".repeat(4097), "rw-------");
        assertThatThrownBy(() -> KeyFiles.read(large.toString())).hasMessage("key file " + large
            + " is 4097 bytes, too large for a key");
        assertThatThrownBy(() -> KeyFiles.read(dir.resolve("none").toString()))
            .hasMessage("key file " + dir.resolve("none") + " does not exist");
    }

    /** A symbolic link to a loose-mode file swapped in after the path was looked at and before the open: refused. */
    @Test
    void aSymbolicLinkSwappedInBeforeTheOpenIsRefused() {
        KeyFiles.race = at(KeyFiles.Stage.OPEN, this::swapInLinkToLoose);
        assertThatThrownBy(() -> KeyFiles.read(key.toString()))
            .hasMessage("key file " + key + " is not a regular file (symbolic links are refused)");
    }

    /** The same swap after the checks: what is read is the checked file, never the loose one. */
    @Test
    void aSymbolicLinkSwappedInAfterTheChecksIsNotRead() throws IOException {
        KeyFiles.race = at(KeyFiles.Stage.READ, this::swapInLinkToLoose);
        byte[] read = KeyFiles.read(key.toString()).secret();
        assertThat(Arrays.equals(read, other)).as("the loose file's key was read").isFalse();
        assertThat(read).isEqualTo(checked);
        assertThat(Files.isSymbolicLink(key)).as("the swap happened").isTrue();
    }

    /** A loose-mode regular file renamed into the path before the open: its mode is what is checked, so refused. */
    @Test
    void aLooseFileRenamedInBeforeTheOpenIsRefused() {
        KeyFiles.race = at(KeyFiles.Stage.OPEN, () -> Files.move(loose, key, StandardCopyOption.REPLACE_EXISTING,
            StandardCopyOption.ATOMIC_MOVE));
        assertThatThrownBy(() -> KeyFiles.read(key.toString())).hasMessageContaining("permissions 0644 are too open");
    }

    /** The file grows past 4 KiB after its size was checked: the read from the descriptor stops at the cap. */
    @Test
    void aFileThatGrowsAfterTheChecksIsRefused() {
        KeyFiles.race = at(KeyFiles.Stage.READ, () -> Files.writeString(key, "\n".repeat(8192),
            StandardOpenOption.APPEND));
        assertThatThrownBy(() -> KeyFiles.read(key.toString()))
            .hasMessage("key file " + key + " is more than 4096 bytes, too large for a key");
    }

    private void swapInLinkToLoose() throws IOException {
        Path tmp = dir.resolve("swap");
        Files.createSymbolicLink(tmp, loose);
        Files.move(tmp, key, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    private interface Step {
        void run() throws IOException;
    }

    private static java.util.function.Consumer<KeyFiles.Stage> at(KeyFiles.Stage stage, Step step) {
        return s -> {
            if (s == stage) {
                try {
                    step.run();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        };
    }

    private Path write(String name, String text, String mode) throws IOException {
        Path p = dir.resolve(name);
        Files.writeString(p, text);
        Files.setPosixFilePermissions(p, PosixFilePermissions.fromString(mode));
        return p;
    }

    private static byte[] secret(int fill) {
        byte[] b = new byte[32];
        Arrays.fill(b, (byte) fill);
        return b;
    }
}
