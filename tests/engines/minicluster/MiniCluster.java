import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.charset.StandardCharsets;
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

import org.apache.hadoop.mapred.MiniMRYarnClusterAdapter;
import org.apache.hadoop.mapreduce.MiniHadoopClusterManager;
import org.apache.hadoop.yarn.server.nodemanager.NodeManager;

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
 * With -Dmrsparse.control=DIR it takes requests as files in DIR, for tests
 * that inject faults: "stop-nodemanager-I" (I from 0) stops that NodeManager
 * (it unregisters from the ResourceManager and kills its containers; the
 * cluster runs on with the others) and answers with the file
 * "nodemanager-I.stopped" holding the NodeManager's state after the stop
 * (STOPPED), or "nodemanager-I.failed" holding the error.
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

        String control = System.getProperty("mrsparse.control");
        if (control != null) {
            Path dir = Paths.get(control);
            Files.createDirectories(dir);
            Thread requests = new Thread(() -> {
                while (true) {
                    try {
                        serveRequests(manager, dir);
                        Thread.sleep(500);
                    } catch (InterruptedException e) {
                        return;
                    } catch (Exception e) {
                        // a request file half-made or removed while listed: next time
                    }
                }
            }, "minicluster-control");
            requests.setDaemon(true);
            requests.start();
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

    /** Serves the "stop-nodemanager-I" requests found in DIR (see above). */
    static void serveRequests(MiniHadoopClusterManager manager, Path dir) throws IOException {
        for (Path request : list(dir, "stop-nodemanager-*", false)) {
            String index = request.getFileName().toString().substring("stop-nodemanager-".length());
            Files.delete(request);
            String answer;
            String outcome;
            try {
                NodeManager nm = nodeManager(manager, Integer.parseInt(index));
                System.err.println("MiniCluster: stopping NodeManager " + index + " on request");
                nm.stop();
                answer = String.valueOf(nm.getServiceState());
                outcome = "stopped";
            } catch (Exception e) {
                answer = e.toString();
                outcome = "failed";
            }
            System.err.println("MiniCluster: NodeManager " + index + ": " + outcome + " " + answer);
            Path tmp = dir.resolve("nodemanager-" + index + ".tmp");
            Files.write(tmp, answer.getBytes(StandardCharsets.UTF_8));
            Files.move(tmp, dir.resolve("nodemanager-" + index + "." + outcome));
        }
    }

    /** The manager's I-th NodeManager (the manager keeps its cluster private). */
    static NodeManager nodeManager(MiniHadoopClusterManager manager, int index) throws Exception {
        Field mr = MiniHadoopClusterManager.class.getDeclaredField("mr");
        mr.setAccessible(true);
        MiniMRYarnClusterAdapter adapter = (MiniMRYarnClusterAdapter) mr.get(manager);
        if (adapter == null) {
            throw new IllegalStateException("YARN is not running");
        }
        return adapter.getMiniMRYarnCluster().getNodeManager(index);
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
