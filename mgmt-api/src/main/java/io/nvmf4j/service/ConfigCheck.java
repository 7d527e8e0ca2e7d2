package io.nvmf4j.service;

import io.nvmf4j.config.ConfigException;
import io.nvmf4j.config.ConfigStore;
import io.nvmf4j.config.ConfigValidator;
import io.nvmf4j.config.StorageConfig;
import io.nvmf4j.config.TargetConfig;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The checks a configuration document passes before the service starts from it: the strict parse
 * ({@link ConfigStore#load}), the {@link ConfigValidator}, and what only the service needs (the API's TLS
 * files are readable). The service's start and {@code nvmf4j-target check-config} both come here, so a
 * document that checks valid is one the service starts from; nothing here writes anything.
 */
public final class ConfigCheck {
    private ConfigCheck() {
    }

    /**
     * Reads and checks {@code file}, with the default storage section ({@link #defaultStorage}). Throws {@link ConfigException} naming every bad field (the parse's
     * single error when the document cannot be read as a configuration at all), IOException when the file
     * cannot be read.
     */
    public static TargetConfig load(Path file, Path stateDir) throws IOException {
        TargetConfig c = ConfigStore.load(file);
        defaultStorage(c, stateDir);
        check(c);
        return c;
    }

    /**
     * A document without a {@code storage} section gets the service's default: file bdevs may live in
     * {@link #imagesDir} (never the state directory itself, which holds the config, the API token and the
     * reservation files: a namespace there would hand them to a host), no block device is listed. Returns whether
     * it set it (the caller writes it to the file).
     */
    public static boolean defaultStorage(TargetConfig c, Path stateDir) {
        if (c.storage != null) {
            return false;
        }
        c.storage = StorageConfig.directories(imagesDir(stateDir).toString());
        return true;
    }

    /** {@code <state-dir>/images}: the default place of file bdevs' images (the service makes it, mode 0700). */
    public static Path imagesDir(Path stateDir) {
        return stateDir.toAbsolutePath().normalize().resolve("images");
    }

    /** Validates a parsed document: the validator's problems and the service's, all of them in one exception. */
    public static void check(TargetConfig c) {
        List<String> problems = new ArrayList<>();
        try {
            ConfigValidator.validate(c);
        } catch (ConfigException e) {
            problems.addAll(e.problems());
        }
        problems.addAll(serviceProblems(c));
        if (!problems.isEmpty()) {
            throw new ConfigException(problems);
        }
    }

    /** What the service needs beyond a valid document: with the API on, its TLS certificate and key readable. */
    static List<String> serviceProblems(TargetConfig c) {
        List<String> p = new ArrayList<>();
        if (c.api == null || c.api.port == 0) {
            return p;
        }
        readable("api.tlsCert", c.api.tlsCert, p);
        readable("api.tlsKey", c.api.tlsKey, p);
        return p;
    }

    private static void readable(String field, String path, List<String> p) {
        if (path == null) {
            return;
        }
        Path f = Path.of(path);
        if (!Files.exists(f)) {
            p.add(field + ": no such file " + path);
        } else if (!Files.isRegularFile(f)) {
            p.add(field + ": not a regular file: " + path);
        } else if (!Files.isReadable(f)) {
            p.add(field + ": cannot read " + path + " (permission denied)");
        }
    }
}
