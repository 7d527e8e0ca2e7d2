package io.nvmf4j.config;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * Where a file bdev may live ({@link StorageConfig}), checked by the shared validator so that both engines refuse
 * the same paths: the newcomer's {@code /etc/passwd}, symbolic links, block devices nobody listed, missing
 * directories, relative paths.
 */
class StorageValidationTest {
    @TempDir
    Path dir;

    private TargetConfig withFile(String path) {
        TargetConfig c = ConfigStore.defaultConfig();
        c.storage = StorageConfig.directories(dir.toString());
        BdevConfig b = new BdevConfig("file0", "file", 512, 2048);
        b.path = path;
        c.bdevs.add(b);
        return c;
    }

    private static String problem(TargetConfig c) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c));
        assertThat(e).as("the document must be refused").isNotNull();
        assertThat(e.problems()).hasSize(1);
        return e.problems().get(0);
    }

    @Test
    void aFileInAnAllowedDirectoryIsAccepted() throws IOException {
        assertThatCode(() -> ConfigValidator.validate(withFile(dir.resolve("new.img").toString())))
            .as("a file to create").doesNotThrowAnyException();
        Files.createDirectory(dir.resolve("sub"));
        Files.write(dir.resolve("sub/old.img"), new byte[4096]);
        assertThatCode(() -> ConfigValidator.validate(withFile(dir.resolve("sub/old.img").toString())))
            .as("an existing file one directory down").doesNotThrowAnyException();
    }

    @Test
    void etcPasswdIsRefused() {
        assertThat(problem(withFile("/etc/passwd"))).startsWith("bdevs[1].path: /etc/passwd is outside "
            + "storage.fileDirectories [" + dir + "]");
    }

    @Test
    void withoutAStorageSectionNoFileIsAllowed() {
        TargetConfig c = withFile(dir.resolve("a.img").toString());
        c.storage = null;
        assertThat(problem(c)).startsWith("bdevs[1].path: " + dir.resolve("a.img") + " is outside "
            + "storage.fileDirectories []");
    }

    @Test
    void aSymbolicLinkAsTheFileIsRefused() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("passwd.img"), Path.of("/etc/passwd"));
        assertThat(problem(withFile(link.toString()))).isEqualTo("bdevs[1].path: " + link
            + " is a symbolic link; a file bdev's path must not pass through one below " + dir);
    }

    @Test
    void aSymbolicLinkAsAParentDirectoryIsRefused() throws IOException {
        Path link = Files.createSymbolicLink(dir.resolve("etc"), Path.of("/etc"));
        assertThat(problem(withFile(link.resolve("passwd").toString()))).isEqualTo("bdevs[1].path: " + link
            + " is a symbolic link; a file bdev's path must not pass through one below " + dir);
    }

    @Test
    void dotDotAndRelativePathsAreRefused() {
        assertThat(problem(withFile(dir + "/../../etc/passwd"))).startsWith("bdevs[1].path: must be an absolute "
            + "path without '.', '..' or a trailing '/'");
        assertThat(problem(withFile("disk.img"))).startsWith("bdevs[1].path: must be an absolute path");
    }

    @Test
    void aMissingDirectoryIsNotCreated() {
        Path f = dir.resolve("no/such/disk.img");
        assertThat(problem(withFile(f.toString()))).isEqualTo("bdevs[1].path: directory " + f.getParent()
            + " does not exist; nvmf4j creates no directories, make it first");
        assertThat(dir.resolve("no")).doesNotExist();
    }

    @Test
    void aDirectoryIsNotAFile() throws IOException {
        Files.createDirectory(dir.resolve("d"));
        assertThat(problem(withFile(dir.resolve("d").toString()))).contains("is neither a regular file nor a "
            + "listed block device");
    }

    @Test
    void rootAsAnAllowedDirectoryIsRefused() {
        TargetConfig c = ConfigStore.defaultConfig();
        c.storage = StorageConfig.directories("/");
        assertThat(problem(c)).startsWith("storage.fileDirectories[0]: / would allow every file");
        c.storage = StorageConfig.directories("relative/dir");
        assertThat(problem(c)).startsWith("storage.fileDirectories[0]: must be an absolute path");
    }

    /** A block device of this machine, if it has one we can see (any will do: nothing is opened). */
    private static Optional<Path> someBlockDevice() throws IOException {
        try (var s = Files.list(Path.of("/sys/class/block"))) {
            return s.map(p -> Path.of("/dev", p.getFileName().toString())).filter(Files::exists)
                .filter(p -> !Files.isRegularFile(p) && !Files.isDirectory(p)).findFirst();
        }
    }

    @Test
    void aBlockDeviceMustBeListed() throws IOException {
        Path dev = someBlockDevice().orElseThrow(() -> new AssertionError("this machine shows no block device"));
        TargetConfig c = withFile(dev.toString());
        c.storage.fileDirectories.add("/dev");
        assertThat(problem(c)).as("under an allowed directory but not listed")
            .isEqualTo("bdevs[1].path: " + dev + " is a block device; list it in storage.blockDevices to serve it");
        c.storage.fileDirectories.remove("/dev");
        assertThat(problem(c)).as("not listed, not under a directory").contains(" is outside storage.fileDirectories");
        c.storage.blockDevices.add(dev.toString());
        assertThatCode(() -> ConfigValidator.validate(c)).as("listed").doesNotThrowAnyException();
    }

    @Test
    void aListedPathThatIsNoBlockDeviceIsRefused() throws IOException {
        Path f = Files.write(dir.resolve("plain.img"), new byte[512]);
        TargetConfig c = withFile(f.toString());
        c.storage.blockDevices.add("/etc/passwd");
        c.bdevs.get(1).path = "/etc/passwd";
        assertThat(catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c)).problems())
            .containsExactly("storage.blockDevices[0]: /etc/passwd is not a block device",
                "bdevs[1].path: /etc/passwd is listed in storage.blockDevices but is not a block device");
        c.storage.blockDevices.set(0, f.toString());
        c.bdevs.get(1).path = f.toString();
        assertThat(catchThrowableOfType(ConfigException.class, () -> ConfigValidator.validate(c)).problems())
            .as("listing a file in the allowed directory does not make it a device").containsExactly(
                "storage.blockDevices[0]: " + f + " is not a block device",
                "bdevs[1].path: " + f + " is listed in storage.blockDevices but is not a block device");
    }
}
