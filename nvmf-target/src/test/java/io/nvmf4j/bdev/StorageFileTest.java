package io.nvmf4j.bdev;

import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.storage.BdevException;
import io.nvmf4j.storage.StorageFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The storage rules enforced on the opened descriptor (review: the java engine decided "block device" from a stat
 * that followed links and then opened without O_NOFOLLOW; O_NOFOLLOW alone covered only the last component). Each
 * case swaps a real symbolic link in where a checked path was, as a local user with write access to the images
 * directory could between the validator's look and the open.
 */
class StorageFileTest {
    private static final int BS = 512;
    private Path dir;
    private Path images;
    private Path outside;
    private ScratchMounts mounts;

    @BeforeEach
    void setUp() throws Exception {
        dir = TestDirs.create("storage-file-");
        images = Files.createDirectory(dir.resolve("images"));
        outside = Files.createDirectory(dir.resolve("outside"));
    }

    @AfterEach
    void tearDown() throws Exception {
        try {
            if (mounts != null) {
                mounts.close();
            }
        } finally {
            TestDirs.delete(dir);
        }
    }

    /** A 64-block loop device over a file outside the images directory (root: the project's machines are). */
    private Path loopDevice() throws Exception {
        ScratchMounts.assumeRoot();
        mounts = new ScratchMounts(dir);
        return mounts.loop(Files.write(outside.resolve("backing.img"), new byte[64 * BS]));
    }

    private StorageConfig storage() {
        return StorageConfig.directories(images.toString());
    }

    @Test
    void aDirectorySwappedForASymbolicLinkAfterValidationIsRefusedAtTheOpen() throws Exception {
        Path sub = Files.createDirectory(images.resolve("sub"));
        Path image = Files.write(sub.resolve("disk.img"), new byte[BS]);
        Path victim = Files.write(outside.resolve("disk.img"), new byte[BS]);
        try (StorageFile f = StorageFile.open("f0", image, storage(), false, false)) {
            assertThat(f.blockDevice()).isFalse();
        }
        // the swap: the checked directory becomes a link to a directory outside storage.fileDirectories
        Files.move(sub, images.resolve("sub.old"), StandardCopyOption.ATOMIC_MOVE);
        Files.createSymbolicLink(sub, outside);
        assertThatThrownBy(() -> FileBdev.open("f0", image, BS, 64, false, 1, 16, storage()))
            .isInstanceOf(BdevException.class)
            .hasMessage("file bdev f0: " + image + " passes through a symbolic link below " + images
                + " (a file image is never reached through one)");
        assertThat(Files.size(victim)).as("the file behind the link was neither opened nor grown").isEqualTo(BS);
    }

    @Test
    void aSymbolicLinkToABlockDeviceInAnImagesDirectoryIsRefused() throws Exception {
        Path device = loopDevice();
        Path link = Files.createSymbolicLink(images.resolve("disk.img"), device);
        assertThatThrownBy(() -> FileBdev.open("f0", link, BS, 0, false, 1, 16, storage()))
            .isInstanceOf(BdevException.class)
            .hasMessage("file bdev f0: " + link + " passes through a symbolic link below " + images
                + " (a file image is never reached through one)");
    }

    @Test
    void aBlockDeviceIsOpenedOnlyWhenListedAndTheDescriptorMustBeOne() throws Exception {
        Path device = loopDevice();
        assertThatThrownBy(() -> StorageFile.open("f0", device, storage(), false, false))
            .isInstanceOf(BdevException.class).hasMessageContaining("is outside storage.fileDirectories");
        StorageConfig listed = storage();
        listed.blockDevices.add(device.toString());
        // a udev-style link the operator listed is followed once, the result opened with O_NOFOLLOW
        Path byId = Files.createSymbolicLink(outside.resolve("by-id-disk"), device);
        listed.blockDevices.add(byId.toString());
        try (FileBdev d = FileBdev.open("f0", byId, BS, 0, false, 1, 16, listed)) {
            assertThat(d.numBlocks()).isEqualTo(64);
        }
        // a listed path that is a regular file is refused by the descriptor's type
        Path plain = Files.write(outside.resolve("plain.img"), new byte[BS]);
        listed.blockDevices.add(plain.toString());
        assertThatThrownBy(() -> StorageFile.open("f0", plain, listed, false, false))
            .isInstanceOf(BdevException.class)
            .hasMessage("file bdev f0: " + plain + " is listed in storage.blockDevices but " + plain.toRealPath()
                + " is not a block device");
    }

    @Test
    void aNewImageIsCreatedWithMode0600AndTheProcPathReopensTheSameFile() throws Exception {
        Path image = images.resolve("new.img");
        try (StorageFile f = StorageFile.open("f0", image, storage(), true, false)) {
            assertThat(f.created()).isTrue();
            assertThat(Files.getPosixFilePermissions(image)).extracting(Object::toString)
                .containsExactlyInAnyOrder("OWNER_READ", "OWNER_WRITE");
            f.extendTo(8 * BS);
            // the path is swapped for a link; /proc/self/fd/N still names the file that was opened
            Files.move(image, images.resolve("moved.img"));
            Files.createSymbolicLink(image, outside);
            assertThat(Files.size(Path.of(f.procPath()))).isEqualTo(8 * BS);
            assertThat(Path.of(f.procPath()).toRealPath()).isEqualTo(images.resolve("moved.img").toRealPath());
        }
    }

    @Test
    void anAllowedDirectoryInsideAnotherIsOpenedAsNamedEvenThroughAnOperatorsLink() throws Exception {
        Path real = Files.createDirectory(outside.resolve("vol"));
        Path link = Files.createSymbolicLink(images.resolve("vol"), real);
        StorageConfig both = StorageConfig.directories(images.toString(), link.toString());
        try (StorageFile f = StorageFile.open("f0", link.resolve("a.img"), both, true, false)) {
            assertThat(f.created()).isTrue();
        }
        assertThat(real.resolve("a.img")).exists();
    }
}
