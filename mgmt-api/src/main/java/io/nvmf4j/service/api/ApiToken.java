package io.nvmf4j.service.api;

import io.nvmf4j.config.ApiConfig;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.EnumSet;
import java.util.HexFormat;
import java.util.Set;

/**
 * The bearer token: {@code api.token} when configured, otherwise the content of
 * {@code <state-dir>/api-token}, created at first start (32 random bytes as hex, mode 0600); an existing one that
 * group or others may access, or that another user owns, is refused ({@link #readPrivate}).
 * {@link #toString()} never shows the value, so the token cannot end up in a log by accident.
 */
public final class ApiToken {
    public static final String FILE_NAME = "api-token";
    /** The longest token file read (a token is 64 hex digits; a configured one is usually shorter). */
    static final int MAX_FILE_BYTES = 4096;

    private final byte[] digest;
    private final String value;
    private final String where;

    private ApiToken(String value, String where) {
        this.value = value;
        this.digest = sha256(value);
        this.where = where;
    }

    /** The configured token, or the one in the state directory (created when absent or empty). */
    public static ApiToken resolve(ApiConfig api, Path stateDir, Path configFile) throws IOException {
        if (api.token != null) {
            return new ApiToken(api.token, "api.token of " + configFile);
        }
        Path file = stateDir.resolve(FILE_NAME);
        if (Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            String existing = readPrivate(file).trim();
            if (!existing.isEmpty()) {
                return new ApiToken(existing, file.toString());
            }
            Files.delete(file);  // left empty by a crash during the first start
        }
        byte[] random = new byte[32];
        new SecureRandom().nextBytes(random);
        String token = HexFormat.of().formatHex(random);
        Files.createDirectories(stateDir);
        try {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        } catch (FileAlreadyExistsException e) {
            return resolve(api, stateDir, configFile);
        }
        Files.writeString(file, token + "\n", StandardCharsets.US_ASCII);
        return new ApiToken(token, file.toString());
    }

    /**
     * The token file's content, refused (IOException naming the file and what to do) unless it is a regular file,
     * not a symbolic link, owned by this process's user, with no permission for group or others: a file others
     * could read may have handed the token out already, so the service does not tighten it and go on with a token
     * that may be known; the operator deletes it (a new one is made at the next start) or, knowing nobody read it,
     * sets mode 0600. The file is opened with O_NOFOLLOW; a swap between the check and the open needs the state
     * directory's owner, who can read the token anyway.
     */
    static String readPrivate(Path file) throws IOException {
        PosixFileAttributes a = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        try (SeekableByteChannel ch = Files.newByteChannel(file, Set.of(StandardOpenOption.READ,
            LinkOption.NOFOLLOW_LINKS))) {
            Set<PosixFilePermission> loose = EnumSet.copyOf(a.permissions());
            loose.retainAll(EnumSet.of(PosixFilePermission.GROUP_READ, PosixFilePermission.GROUP_WRITE,
                PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ, PosixFilePermission.OTHERS_WRITE,
                PosixFilePermission.OTHERS_EXECUTE));
            String user = System.getProperty("user.name");
            if (!a.isRegularFile()) {
                throw new IOException(file + ": the API token file is not a regular file");
            }
            if (!loose.isEmpty() || !a.owner().getName().equals(user)) {
                throw new IOException(file + ": the API token file is mode "
                    + PosixFilePermissions.toString(a.permissions()) + ", owner " + a.owner().getName()
                    + "; it must be rw------- and owned by " + user + " (others may have read the token): delete it "
                    + "to have a new token made at the next start, or chmod 600 it if nobody else could read it");
            }
            ByteBuffer buf = ByteBuffer.allocate(MAX_FILE_BYTES + 1);
            while (buf.hasRemaining() && ch.read(buf) >= 0) {
                // read up to the cap
            }
            if (buf.position() > MAX_FILE_BYTES) {
                throw new IOException(file + ": the API token file is longer than " + MAX_FILE_BYTES + " bytes");
            }
            return new String(buf.array(), 0, buf.position(), StandardCharsets.US_ASCII);
        } catch (FileSystemException e) {
            throw new IOException(file + ": cannot open the API token file (a symbolic link is refused): "
                + e.getMessage(), e);
        }
    }

    /** Whether {@code presented} is the token; takes the same time whatever it shares with it. */
    boolean matches(String presented) {
        return MessageDigest.isEqual(digest, sha256(presented));
    }

    /** Where the token comes from (a file, or the config), for the startup log line. */
    public String where() {
        return where;
    }

    /** The token itself, for in-process callers (tests, a CLI in the same JVM); never log it. */
    public String value() {
        return value;
    }

    private static byte[] sha256(String s) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return "ApiToken(" + where + ")";
    }
}
