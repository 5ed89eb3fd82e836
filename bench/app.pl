#!/usr/bin/perl
# What an application gets: a PSGI app (bench/lib/CMRXBench/App.pm) served
# by Starman (--preload-app, N workers) and driven by wrk over loopback;
# each request a read-through of M keys under Zipf popularity over a key
# space larger than the memcached holds (get_multi; each miss fetched from a
# backend of fixed cost and set), the JSON values decoded and checked, a
# small page rendered. Every configuration (client, parser, codec) side by
# side in one run, in interleaved rounds, at two scales: memory-bound (a
# small memcached warmed by traffic) and hit-bound (every key set first).
#
#   perl -Mblib bench/app.pl [--quick] [--scales memory,hit] [--configs ID,ID]
#        [--workers N] [--connections N] [--keys N] [--per-request M]
#        [--zipf S] [--fetch-ms MS] [--memory MB] [--hit-memory MB]
#        [--duration S] [--rounds N] [--warmup S] [--set DIR] [--report FILE]
#
# See bench/README.md ("Application").
use strict;
use warnings;
use utf8;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";    # dev/lib: helpers shared with the tests
use Cwd ();
use File::Path ();
use File::Spec ();
use File::Temp ();
use Getopt::Long ();
use POSIX ();
use Time::HiRes qw(sleep);

use CMRXBench::Runner qw(now);
use CMRXBench::Memory qw(corpus_halves train_set stats commas check_zipf_guide);
use CMRXBench::Starman ();
use CMRXBench::AppReport qw(summarize print_tables evaluate_bars write_markdown write_svg);
use CMRXDev::Memcached ();

binmode STDOUT, ':encoding(UTF-8)';
STDOUT->autoflush(1);
STDERR->autoflush(1);
$SIG{INT} = $SIG{TERM} = sub {
    print STDERR "\ninterrupted\n";
    kill 'TERM', $CMRXBench::Starman::WRK_PID if $CMRXBench::Starman::WRK_PID;
    exit 130;    # END blocks stop the servers
};

my %opt = (quick => 0, workers => 4, connections => 16, threads => 2,
           keys => 30_000, 'per-request' => 20, zipf => 0.99, 'fetch-ms' => 0.5, memory => 8,
           'hit-memory' => 64, seed => 25, scales => 'memory,hit');
Getopt::Long::GetOptions(\%opt, 'quick!', 'scales=s', 'configs=s', 'workers=i', 'connections=i', 'threads=i',
                         'keys=i', 'per-request=i', 'zipf=f', 'fetch-ms=f', 'memory=i', 'hit-memory=i',
                         'duration=i', 'rounds=i', 'warmup=i', 'seed=i', 'set=s', 'report=s', 'help|h')
    && !$opt{help}
    or die "usage: perl -Mblib bench/app.pl [--quick] [--scales memory,hit] [--configs ID,ID] [--workers N] "
         . "[--connections N] [--threads N] [--keys N] [--per-request M] [--zipf S] [--fetch-ms MS] [--memory MB] "
         . "[--hit-memory MB] [--duration S] [--rounds N] [--warmup S] [--seed N] [--set DIR]\n"
         . "       perl bench/app.pl --report bench/results/app.json   (the tables and the chart of a run again)\n";
my $ROUNDS   = $opt{rounds}   || ($opt{quick} ? 1 : 5);
my $DURATION = $opt{duration} || ($opt{quick} ? 2 : 8);      # seconds of wrk per configuration and round
my $WARMUP   = $opt{warmup}   // ($opt{quick} ? 3 : 20);     # memory-bound: seconds of traffic before counting
my @SCALES   = split /,/, $opt{scales};
my @FAMILIES = qw(gh npm compat);                             # the JSON families of bench/data/values
my %SCALE = (
    memory => { memory => $opt{memory}, title => "memory-bound ($opt{memory} MB, warmed by traffic)" },
    hit    => { memory => $opt{'hit-memory'}, title => "hit-bound ($opt{'hit-memory'} MB, every key set first)" },
);
die "--scales takes memory, hit or both\n" if !@SCALES || grep { !$SCALE{$_} } @SCALES;
die "--workers, --connections, --threads, --keys and --per-request must be positive, --per-request at most --keys\n"
    unless $opt{workers} > 0 && $opt{connections} > 0 && $opt{threads} > 0 && $opt{keys} > 0
        && $opt{'per-request'} > 0 && $opt{'per-request'} <= $opt{keys} && $opt{zipf} > 0 && $opt{'fetch-ms'} >= 0;

my $t_start = now;
my $out = "$FindBin::Bin/results";
my (@CONFIGS, @RUN, $tmp, $set_dir, $train, @INC_DIRS, %results, %meta);
if ($opt{report}) {
    load_report($opt{report});
}
else {
    check_prerequisites();
    choose_configurations();
    check_zipf_guide($opt{keys}, $opt{zipf});    # the workers draw through the guide
    File::Path::make_path($out);
    $tmp = File::Temp->newdir;
    prepare_set();
    @INC_DIRS = map { File::Spec->rel2abs($_) } grep { !ref } @INC;
    for my $scale (@SCALES) { $results{$scale} = run_scale($scale) }
    %meta = (
        date => POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime), perl => sprintf('%vd', $^V),
        machine => machine(), json => json_backend_name(),
        workers => $opt{workers}, connections => $opt{connections}, threads => $opt{threads}, keys => $opt{keys},
        per_request => $opt{'per-request'}, zipf => $opt{zipf}, fetch_ms => $opt{'fetch-ms'}, rounds => $ROUNDS,
        duration => $DURATION, warmup => $WARMUP, seed => $opt{seed}, families => \@FAMILIES,
        scale_order => \@SCALES, scales => { map { ($_ => $SCALE{$_}) } @SCALES },
        contexts_kib => $set_dir ? contexts_kib($set_dir) : undef,
        versions => versions(), seconds => sprintf('%.0f', now - $t_start),
    );
}
exit report();

# ---- what it needs -------------------------------------------------------------------

sub check_prerequisites {
    my @absent = ((grep { !CMRXBench::Starman::which($_) } qw(starman wrk)),
                  (grep { !eval "require $_; 1" } qw(Plack Starman)),
                  (CMRXDev::Memcached->find_binary ? () : 'memcached'));
    if (@absent) {
        print STDERR "bench/app.pl needs starman, wrk, Plack and memcached; missing: @absent.\n"
                   . "On Debian or Ubuntu: apt-get install starman wrk libplack-perl memcached\n"
                   . "(elsewhere: wrk from your OS packages or https://github.com/wg/wrk, cpanm Starman Plack).\n"
                   . "Nothing was installed.\n";
        exit 2;
    }
    eval { require Cache::Memcached::RustXS; 1 }
        or die "bench/app.pl needs this distribution built: perl Makefile.PL && make, then perl -Mblib bench/app.pl\n";
    return;
}

sub choose_configurations {
    require CMRXBench::App;
    @CONFIGS = CMRXBench::App::configurations();
    if ($opt{configs}) {
        my %known = map { ($_->{id} => $_) } @CONFIGS;
        my @ids = split /,/, $opt{configs};
        die "--configs: unknown $_ (known: " . join(', ', map { $_->{id} } @CONFIGS) . ")\n" for grep { !$known{$_} } @ids;
        @CONFIGS = map { $known{$_} } @ids;
    }
    @RUN = grep { !$_->{missing} } @CONFIGS;
    die "no configuration can run here: " . join('; ', map { "$_->{id}: $_->{missing}" } @CONFIGS) . "\n" unless @RUN;
    return;
}

# ---- the set, and the reference of a worker's own contexts ---------------------------------

sub prepare_set {
    $set_dir = $opt{set};
    ($train) = corpus_halves(@FAMILIES);
    if (!$set_dir && grep { $_->{set} } @RUN) {
        print STDERR "training the set: cmrx-dict train --all --stage 0 --out-dir DIR (the training half of @FAMILIES)\n";
        $set_dir = train_set(dir => "$tmp/set", log => "$out/app-train.txt",
                             items => [ map { @{ $train->{$_} } } @FAMILIES ]);
    }
    $set_dir = Cwd::abs_path($set_dir) if $set_dir;
    return;
}

# A worker's own contexts, as the operations guide's PREFORKING SERVERS
# measures them: a process loads the set and forks; the child's
# Private_Dirty before and after it compresses and decompresses a value
# with each dictionary of the set, at its level. KiB.
sub contexts_kib {
    my ($dir) = @_;
    pipe my $r, my $w or die "pipe: $!\n";
    my $pid = fork // die "fork: $!\n";
    if (!$pid) {
        close $r;
        my $kib = eval {
            require Cache::Memcached::RustXS::Zstd;
            my $set = Cache::Memcached::RustXS::Zstd::load_dictionaries($dir);
            my $value = $train->{ $FAMILIES[0] }[0][1];
            pipe my $cr, my $cw or die "pipe: $!\n";
            my $child = fork // die "fork: $!\n";
            if (!$child) {
                close $cr;
                my $before = CMRXBench::Starman->memory_of($$)->{private_dirty};
                for my $e ($set->entries) {
                    my $frame = Cache::Memcached::RustXS::Zstd::compress($value, level => $e->{level}, dictionary => $e->{id});
                    Cache::Memcached::RustXS::Zstd::decompress($frame) eq $value or die "round trip failed\n";
                }
                print {$cw} CMRXBench::Starman->memory_of($$)->{private_dirty} - $before;
                close $cw;
                POSIX::_exit(0);
            }
            close $cw;
            my $got = do { local $/; <$cr> };
            waitpid $child, 0;
            $got;
        };
        print {$w} $kib // '';
        close $w;
        POSIX::_exit(0);
    }
    close $w;
    my $kib = do { local $/; <$r> };
    waitpid $pid, 0;
    return length $kib ? $kib : undef;
}

# ---- one scale: a memcached and a Starman per configuration, rounds of wrk ---------------

sub run_scale {
    my ($scale) = @_;
    my $mb = $SCALE{$scale}{memory};
    print STDERR "== $SCALE{$scale}{title}: starting a memcached (-m $mb) and a Starman ($opt{workers} workers) "
               . "for each of " . scalar(@RUN) . " configurations\n";
    my (%server, %memcached, %stats_dir);
    for my $c (@RUN) {
        $memcached{ $c->{id} } = CMRXDev::Memcached->start(args => [ '-m', $mb ]);
        $stats_dir{ $c->{id} } = "$tmp/stats-$scale-$c->{id}";
        mkdir $stats_dir{ $c->{id} } or die "$stats_dir{ $c->{id} }: $!\n";
        my $psgi = write_psgi($c, $memcached{ $c->{id} }->address, $stats_dir{ $c->{id} });
        $server{ $c->{id} } = CMRXBench::Starman->start(psgi => $psgi, workers => $opt{workers},
                                                          log => "$tmp/starman-$scale-$c->{id}.log", inc => \@INC_DIRS);
    }
    my %prep;
    for my $c (@RUN) {
        my ($s, $m) = ($server{ $c->{id} }, $memcached{ $c->{id} });
        if ($scale eq 'hit') {
            printf STDERR "  [%.0f s] %s: setting every key (%s)\n", now - $t_start, $c->{id}, commas($opt{keys});
            fill($s);
            wrk_run($s, 1);    # every worker makes its client
        }
        else {
            printf STDERR "  [%.0f s] %s: warming by traffic for %s s\n", now - $t_start, $c->{id}, $WARMUP;
            wrk_run($s, $WARMUP);
        }
        my $st = stats($m->address);
        $prep{ $c->{id} } = { items => $st->{curr_items}, evictions => $st->{evictions} };
    }
    my %samples;
    for my $round (1 .. $ROUNDS) {
        my @order = map { $RUN[ ($_ + $round - 1) % @RUN ] } 0 .. $#RUN;
        printf STDERR "  [%.0f s] round $round of $ROUNDS: ", now - $t_start;
        print STDERR join(' ', map { $_->{id} } @order), "\n";
        for my $c (@order) {
            my ($s, $m, $dir) = ($server{ $c->{id} }, $memcached{ $c->{id} }, $stats_dir{ $c->{id} });
            my $before = CMRXBench::App->read_counters($dir);
            my $st0 = stats($m->address);
            my @workers = $s->workers;
            my $cpu0 = cpu_of(@workers);
            my $mc_cpu0 = cpu_of($m->pid);
            my $w = wrk_run($s, $DURATION);
            sleep 0.3;    # requests still in a worker when wrk stopped
            my $after = CMRXBench::App->read_counters($dir);
            my $st = stats($m->address);
            my ($cpu, $mc_cpu) = (cpu_of(@workers) - $cpu0, cpu_of($m->pid) - $mc_cpu0);
            my %d;
            for my $pid (keys %$after) {
                $d{$_} += $after->{$pid}{$_} - ($before->{$pid}{$_} // 0) for keys %{ $after->{$pid} };
            }
            push @{ $samples{ $c->{id} } }, {
                round => $round, (map { ($_ => $w->{$_}) } grep { $_ ne 'output' } keys %$w), wrk_requests => $w->{requests}, %d,
                items => $st->{curr_items}, evictions => $st->{evictions} - $st0->{evictions},
                worker_cpu => $cpu, memcached_cpu => $mc_cpu, load => load_average(),
                workers => [ map { memory_kib($_) } @workers ],
                master => memory_kib($s->pid),
            };
            my $x = $samples{ $c->{id} }[-1];
            printf STDERR "    %-18s %7.0f req/s  p50 %6.2f ms  p99 %6.2f ms  CPU %5.2f ms/req  hits %5.1f %%  wrong %d\n",
                $c->{id}, $x->{rps}, 1000 * $x->{p50}, 1000 * $x->{p99}, $x->{requests} ? 1000 * $cpu / $x->{requests} : 0,
                $x->{keys} ? 100 * $x->{hits} / $x->{keys} : 0, ($x->{wrong} // 0) + $x->{non2xx};
        }
    }
    CMRXBench::Starman->stop_together(values %server, values %memcached);
    for my $c (@RUN) {
        my $log = "$tmp/starman-$scale-$c->{id}.log";
        if (-s $log && open my $fh, '<', $log) {
            my @warn = grep { !/^(?:Starman|Plack|2\d\d\d\/)|Setting gid|Binding to|Starman: Accepting|Server closing/ } <$fh>;
            print STDERR "  $c->{id}: Starman's log:\n", map { "    $_" } @warn[ 0 .. ($#warn < 9 ? $#warn : 9) ] if @warn;
        }
    }
    return { prep => \%prep, samples => \%samples };
}

# The machine's load average over the last minute: what else ran.
sub load_average {
    open my $fh, '<', '/proc/loadavg' or return undef;
    my ($one) = split ' ', scalar(<$fh> // '');
    return $one;
}

# A process's RSS, PSS and Private_Dirty, in KiB.
sub memory_kib {
    my $m = CMRXBench::Starman->memory_of($_[0]);
    return { map { ($_ => $m->{$_}) } qw(rss pss private_dirty) };
}

# The CPU seconds the processes have used.
sub cpu_of { my $t = 0; $t += CMRXBench::Starman->cpu_seconds_of($_) for @_; return $t }

# The app of configuration $c as a .psgi file: what starman --preload-app loads.
sub write_psgi {
    my ($c, $address, $stats_dir) = @_;
    my %args = (config => $c->{id}, server => $address, ($set_dir ? (set => $set_dir) : ()),
                families => \@FAMILIES, keys => $opt{keys}, per_request => $opt{'per-request'},
                zipf => $opt{zipf}, fetch_ms => $opt{'fetch-ms'}, seed => $opt{seed}, stats_dir => $stats_dir);
    require Data::Dumper;
    my $dump = Data::Dumper->new([ \%args ])->Terse(1)->Indent(1)->Sortkeys(1)->Dump;
    (my $where = $address) =~ s/\W/-/g;
    my $file = "$tmp/app-$c->{id}-$where.psgi";
    open my $fh, '>', $file or die "$file: $!\n";
    print {$fh} "use strict;\nuse warnings;\nuse CMRXBench::App;\nCMRXBench::App->new(%{ $dump })->to_app;\n";
    close $fh or die "$file: $!\n";
    return $file;
}

# Sets every key through the app itself (so through the configuration's
# own client and codec), a range per worker at a time.
sub fill {
    my ($server) = @_;
    my $per = int(($opt{keys} + $opt{workers} - 1) / $opt{workers});
    my @kids;
    for (my $from = 0; $from < $opt{keys}; $from += $per) {
        my $pid = fork // die "fork: $!\n";
        if (!$pid) {
            my $r = $server->get("/fill?from=$from&to=" . ($from + $per));
            POSIX::_exit($r->{success} ? 0 : 1);
        }
        push @kids, $pid;
    }
    for (@kids) { waitpid $_, 0; die "filling the keys through the app failed\n" if $? }
}

sub wrk_run {
    my ($server, $seconds) = @_;
    return CMRXBench::Starman->wrk(url => $server->url('/'), threads => $opt{threads},
                                   connections => $opt{connections}, seconds => $seconds);
}

# ---- the report ---------------------------------------------------------------------------------

# Prints the tables and the bars, writes app.md, app.svg and app.json;
# returns the exit status: 1 when a value read back was wrong.
sub report {
    my @scales = @{ $meta{scale_order} };
    my $summary = summarize(\%results, \@CONFIGS, \@scales);
    print_tables(\*STDOUT, \%meta, $summary, \@CONFIGS, \@scales);
    my @bars = evaluate_bars($summary, \%meta);
    print "\nBars:\n";
    for my $b (@bars) { printf "  %s %s: %s\n", (!defined $b->{met} ? '—' : $b->{met} ? '✓' : '✗'), $b->{text}, $b->{value} }
    my $wrong = 0;
    for my $scale (@scales) { $wrong += ($_->{wrong} // 0) + ($_->{non2xx} // 0) for values %{ $summary->{$scale} } }
    print "\nChecks: every value read back equal to the value set and decoded to its shape: ",
          ($wrong ? "NO: $wrong wrong values or failed requests (Starman's log above says which)" : 'yes'), "\n";
    File::Path::make_path($out);
    write_markdown("$out/app.md", \%meta, $summary, \@CONFIGS, \@scales, \@bars);
    write_svg("$out/app.svg", \%meta, $summary, \@CONFIGS, \@scales);
    if (!$opt{report} && eval { require JSON::PP; 1 }) {
        open my $j, '>', "$out/app.json" or die "$out/app.json: $!\n";
        print {$j} JSON::PP->new->canonical->pretty->encode({ %meta, summary => $summary, bars => \@bars,
            configurations => \@CONFIGS, samples => \%results });
        close $j;
    }
    print "results: bench/results/", ($opt{report} ? '' : 'app.json, '), "app.md (the tables in Markdown), app.svg (the chart)",
          $set_dir && !$opt{set} ? "; the training's report: bench/results/app-train.txt" : '', "\n";
    return $wrong ? 1 : 0;
}

# The run recorded in an app.json, to print and draw again.
sub load_report {
    my ($file) = @_;
    require JSON::PP;
    open my $fh, '<', $file or die "$file: $!\n";
    my $doc = JSON::PP->new->decode(do { local $/; <$fh> });
    @CONFIGS = @{ delete $doc->{configurations} };
    %results = %{ delete $doc->{samples} };
    delete @$doc{qw(summary bars)};
    %meta = %$doc;
    return;
}

sub json_backend_name {
    for my $m (qw(Cpanel::JSON::XS JSON::XS JSON::PP)) { return "$m " . $m->VERSION if eval "require $m; 1" }
    return 'none';
}

sub machine {
    my %m = (cores => 0, cpu => 'unknown');
    if (open my $fh, '<', '/proc/cpuinfo') {
        while (my $line = <$fh>) { $m{cores}++ if $line =~ /^processor\s*:/; $m{cpu} = $1 if $line =~ /^model name\s*:\s*(.+?)\s*$/ }
    }
    if (open my $fh, '<', '/proc/meminfo') { while (my $line = <$fh>) { $m{memory_mb} = int($1 / 1024) if $line =~ /^MemTotal:\s+(\d+)/ } }
    $m{os} = join ' ', (POSIX::uname())[ 0, 2 ];
    if (open my $fh, '<', '/etc/os-release') { while (my $line = <$fh>) { $m{os} = "$1, $m{os}" if $line =~ /^PRETTY_NAME="?([^"\n]+)/ } }
    return \%m;
}

sub versions {
    my %v;
    for my $m (qw(Cache::Memcached Cache::Memcached::GetParserXS Cache::Memcached::Fast Cache::Memcached::RustXS
                  Compress::Zlib Starman Plack)) {
        $v{$m} = eval "require $m; 1" ? $m->VERSION // '?' : undef;
    }
    my $wrk = CMRXBench::Starman::which('wrk');
    $v{wrk} = $wrk && `'$wrk' -v 2>&1` =~ /wrk (\S+)/ ? $1 : undef;
    my $mc = CMRXDev::Memcached->find_binary;
    $v{memcached} = $mc && `'$mc' -V 2>&1` =~ /memcached (\S+)/ ? $1 : undef;
    return \%v;
}
