import java.io.IOException;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.hadoop.mapreduce.MiniHadoopClusterManager;

import sun.misc.Signal;

/**
 * Hadoop's CLI MiniCluster (HDFS + YARN + MapReduce JobHistory in this JVM)
 * that stops cleanly on SIGTERM, SIGINT or SIGHUP, and on end of stdin when
 * -Dmrsparse.stopOnStdinEof=true (its parent died: the pipe closed).
 *
 * The stock MiniHadoopClusterManager only sleeps once started: a signal just
 * kills the JVM, and calling stop() from a JVM shutdown hook fails half-way
 * (the DataNode refuses work once shutdown is in progress). So the manager
 * runs on a thread of its own and stop() is called from main, an ordinary
 * thread, when a stop is asked for. Arguments are the manager's
 * (-format -nnport P -rmport P -jhsport P -datanodes N -nodemanagers N
 * -writeConfig FILE -writeDetails FILE -D name=value ...).
 *
 * With -Dmrsparse.userlogs=DIR it also keeps DIR/APPLICATION/CONTAINER/FILE
 * links to the task logs, which each NodeManager spreads over 4 log dirs under
 * ./target: one "userlogs" dir, as on a pseudo-distributed Hadoop, where mrjob
 * finds the error of a failed task (it reads only the first dir that has logs).
 *
 * Exit status: 0 after a clean stop, 1 if the cluster failed to start or to
 * stop, 2 if the manager rejected its arguments.
 */
public final class MiniCluster {
    public static void main(String[] args) throws Exception {
        final MiniHadoopClusterManager manager = new MiniHadoopClusterManager();
        final CountDownLatch stop = new CountDownLatch(1);
        final AtomicReference<String> why = new AtomicReference<>();
        final AtomicReference<Throwable> failed = new AtomicReference<>();

        Thread runner = new Thread(() -> {
            try {
                manager.run(args);        // parses, starts, then sleeps forever
                why.compareAndSet(null, "bad arguments");   // run() returned: parse failed
            } catch (Throwable t) {
                failed.set(t);
                why.compareAndSet(null, "start failed");
            }
            stop.countDown();
        }, "minicluster-manager");
        runner.setDaemon(true);

        for (String name : new String[] {"TERM", "INT", "HUP"}) {
            Signal.handle(new Signal(name), sig -> {
                why.compareAndSet(null, "SIG" + sig.getName());
                stop.countDown();
            });
        }
        if (Boolean.getBoolean("mrsparse.stopOnStdinEof")) {
            Thread watcher = new Thread(() -> {
                try {
                    InputStream in = System.in;
                    while (in.read() >= 0) {
                        // ignore input; only the end matters
                    }
                } catch (Exception e) {
                    // a broken stdin counts as the end
                }
                why.compareAndSet(null, "end of stdin");
                stop.countDown();
            }, "minicluster-stdin-watcher");
            watcher.setDaemon(true);
            watcher.start();
        }

        String userlogs = System.getProperty("mrsparse.userlogs");
        if (userlogs != null) {
            Path links = Paths.get(userlogs);
            Files.createDirectories(links);
            Thread mirror = new Thread(() -> {
                while (true) {
                    try {
                        linkTaskLogs(Paths.get("target"), links);
                        Thread.sleep(500);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // a dir removed while listed: try again next time
                    }
                }
            }, "minicluster-userlogs");
            mirror.setDaemon(true);
            mirror.start();
        }

        runner.start();
        stop.await();
        System.err.println("MiniCluster: stopping (" + why.get() + ")");
        int status = 0;
        if (failed.get() != null) {
            System.err.println("MiniCluster: the cluster failed to start:");
            failed.get().printStackTrace();
            status = 1;
        } else if ("bad arguments".equals(why.get())) {
            status = 2;
        }
        try {
            manager.stop();
        } catch (Throwable t) {
            System.err.println("MiniCluster: stop failed:");
            t.printStackTrace();
            status = 1;
        }
        System.err.println("MiniCluster: stopped");
        // non-daemon threads of HDFS or YARN may linger after stop()
        System.exit(status);
    }

    /**
     * Links LINKS/application_X/container_Y/FILE to the task log files. A
     * NodeManager makes a dir for each container in each of its log dirs and
     * writes each file (stderr, syslog, ...) in one of them: files are linked,
     * not dirs, and a file is linked where it is first seen.
     */
    static void linkTaskLogs(Path target, Path links) throws IOException {
        if (!Files.isDirectory(target)) {
            return;
        }
        List<Path> logDirs;
        try (Stream<Path> found = Files.find(target, 5, (p, a) -> a.isDirectory()
                && p.getFileName().toString().matches(".*-logDir-nm-\\d+_\\d+"))) {
            logDirs = found.collect(Collectors.toList());
        }
        for (Path logDir : logDirs) {
            for (Path app : list(logDir, "application_*", true)) {
                for (Path container : list(app, "container_*", true)) {
                    Path dir = links.resolve(app.getFileName().toString())
                        .resolve(container.getFileName().toString());
                    for (Path file : list(container, "*", false)) {
                        Path link = dir.resolve(file.getFileName().toString());
                        if (!Files.exists(link, LinkOption.NOFOLLOW_LINKS)) {
                            Files.createDirectories(dir);
                            Files.createSymbolicLink(link, file.toAbsolutePath());
                        }
                    }
                }
            }
        }
    }

    /** The dirs (or the regular files) in DIR whose names match GLOB. */
    static List<Path> list(Path dir, String glob, boolean dirs) throws IOException {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(dir, glob)) {
            for (Path p : ds) {
                if (dirs ? Files.isDirectory(p) : Files.isRegularFile(p)) {
                    out.add(p);
                }
            }
        }
        return out;
    }
}
