package io.nvmf4j.service.api;

import io.nvmf4j.config.ApiConfig;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.HexFormat;

/**
 * The bearer token: {@code api.token} when configured, otherwise the content of
 * {@code <state-dir>/api-token}, created at first start (32 random bytes as hex, mode 0600).
 * {@link #toString()} never shows the value, so the token cannot end up in a log by accident.
 */
public final class ApiToken {
    public static final String FILE_NAME = "api-token";

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
        if (Files.exists(file)) {
            String existing = Files.readString(file, StandardCharsets.US_ASCII).trim();
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
