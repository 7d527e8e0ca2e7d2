package io.nvmf4j.config;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Where {@code file} bdevs may live. A file bdev's path must either be a regular file (or a file to create) under
 * one of {@link #fileDirectories}, reached without symbolic links below that directory, or be one of
 * {@link #blockDevices} by its exact text; an rbd bdev's Ceph config and keyring must lie under one of
 * {@link #cephDirectories}. Anything else (a file in {@code /etc}, a block device nobody listed) is
 * refused by {@link ConfigValidator}, so both engines refuse it. The service writes its state directory here at
 * first start when the section is absent; the management API cannot change it (edit the file and restart).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = false)
public final class StorageConfig {
    /** Absolute directories under which file bdev images may be created and opened. */
    public List<String> fileDirectories = new ArrayList<>();
    /**
     * Absolute paths of the block devices file bdevs may open, each exactly as a bdev's {@code path} names it (a
     * udev link such as {@code /dev/disk/by-id/...} may be listed; it is followed).
     */
    public List<String> blockDevices = new ArrayList<>();
    /**
     * Absolute directories under which rbd bdevs' {@code cephConf} and {@code keyring} may lie, reached without
     * symbolic links below the directory (librados reads them as the service, and a Ceph config names files the
     * client writes). Keep them apart from {@link #fileDirectories}: hosts write what images hold. Default
     * {@code /etc/ceph}.
     */
    public List<String> cephDirectories = new ArrayList<>(List.of(DEFAULT_CEPH_DIRECTORY));

    public static final String DEFAULT_CEPH_DIRECTORY = "/etc/ceph";

    public StorageConfig() {
    }

    /** Allows file images under {@code directories}. */
    public static StorageConfig directories(String... directories) {
        StorageConfig s = new StorageConfig();
        s.fileDirectories.addAll(List.of(directories));
        return s;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof StorageConfig s && Objects.equals(fileDirectories, s.fileDirectories)
            && Objects.equals(blockDevices, s.blockDevices) && Objects.equals(cephDirectories, s.cephDirectories);
    }

    @Override
    public int hashCode() {
        return Objects.hash(fileDirectories, blockDevices, cephDirectories);
    }
}
