#!/usr/bin/perl
# Faults under load: both clients, in several processes at once, write and
# read values that check themselves (CMRXTest::CheckedValues: each says its
# key, its length and a checksum; 1 byte to 400 KB, compressible or not,
# strings and Storable hashes; get and get_multi over up to 12 keys on two
# servers) through loopback proxies (CMRXTest::FaultProxy) that cut
# connections inside VALUE lines, inside data blocks, just before END and
# at random bytes, and split every write into small pieces with short
# pauses, while the memcached behind each proxy is killed with SIGKILL and
# started again several times.
#
# No value may ever come back wrong -- one that does not check, another
# key's, truncated, still compressed, with its "\r\n" -- and no client
# process may die or hang: each reports its counts over a pipe
# (CMRXTest::Worker) and one that is not done when the deadline passes is
# killed and fails. Misses are fine. The stock clients run alongside as a
# control (Cache::Memcached with the pure-Perl GetParser and
# Compress::Zlib, Cache::Memcached::Fast with its own gzip).
#
# About 10 s; CMRX_FAULTS_SCALE=N runs N times as long with N times as many
# restarts. A client that is absent skips with the reason; without
# memcached the file skips (fails with CMRX_REQUIRE_MEMCACHED=1). After make:
#   prove -b -v xt/faults-under-load.t
use strict;
use warnings;

use lib 't/lib';
use Time::HiRes qw(sleep time);
use Test::More;

use Cache::Memcached::RustXS::GetParser ();
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use CMRXTest::CheckedValues qw(checked_value check_value value_kinds);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing);
use CMRXTest::FaultProxy;
use CMRXTest::Memcached;
use CMRXTest::Worker;

my $SCALE = $ENV{CMRX_FAULTS_SCALE} // 1;
$SCALE = 1 unless $SCALE =~ /\A[1-9][0-9]*\z/;

my $SERVERS        = 2;                  # Cache::Memcached spreads keys over them
my @MEMCACHED_ARGS = ('-t', '2');        # two cores on the machines this runs on
my $SECONDS        = 8 * $SCALE;         # how long each client works
my $RESTARTS       = 3 * $SCALE * $SERVERS;
my $MAX_OPS        = 50_000 * $SCALE;    # per client: a bound, not a target
my $GRACE          = 15;                 # seconds past $SECONDS: then it hangs
my $DOWN_MIN       = 0.1;                # seconds a killed server stays down,
my $DOWN_SPREAD    = 0.3;                # ... plus up to this
my $KEYS           = 100;
my $MAX_SIZE       = 400_000;            # payload bytes, log-spread from 1
my $MULTI_MAX      = 12;                 # keys of a get_multi, from 2
my $SET_SHARE      = 0.4;                # of the operations; then get,
my $GET_SHARE      = 0.2;                # ... and the rest get_multi
my $THRESHOLD      = 1_000;              # compress_threshold of every client
my $NAMESPACE      = 'cmrx-faults:';
my $NOTES_MAX      = 10;                 # wrong values listed per client

sub cm_client {
    my ($parser, $addresses) = @_;
    require Cache::Memcached::GetParser;
    return Cache::Memcached->new({
        servers => $addresses, namespace => $NAMESPACE,
        compress_threshold => $THRESHOLD, parser_class => $parser,
    });
}

sub fast_client {
    my ($addresses, @methods) = @_;
    return Cache::Memcached::Fast->new({
        servers => $addresses, namespace => $NAMESPACE,
        # Also what gives Fast 0.27 and older a decompressor at all.
        compress_threshold => $THRESHOLD, @methods,
    });
}

my $OURS = 'Cache::Memcached::RustXS::GetParser';
my @CLIENTS = (
    { name => 'cm-ours-override', missing => \&cache_memcached_missing,
      about => "Cache::Memcached, $OURS, our gzip (override_compress_zlib)",
      new => sub {
          Cache::Memcached::RustXS::Zlib::override_compress_zlib();
          cm_client($OURS, @_);
      } },
    { name => 'cm-ours-zlib', missing => \&cache_memcached_missing,
      about => "Cache::Memcached, $OURS, Compress::Zlib",
      new => sub { cm_client($OURS, @_) } },
    { name => 'cm-ours-zstd', missing => \&cache_memcached_missing,
      about => 'Cache::Memcached::RustXS::Memcached, zstd level 3 (its parser is ours)',
      new => sub {
          require Cache::Memcached::RustXS::Memcached;
          Cache::Memcached::RustXS::Memcached->new({
              servers => $_[0], namespace => $NAMESPACE,
              compress_threshold => $THRESHOLD, zstd => { level => 3 },
          });
      } },
    { name => 'cm-stock', missing => \&cache_memcached_missing,
      about => 'Cache::Memcached, Cache::Memcached::GetParser, Compress::Zlib (control)',
      new => sub { cm_client('Cache::Memcached::GetParser', @_) } },
    { name => 'fast-ours-zlib', missing => \&fast_missing,
      about => 'Cache::Memcached::Fast, Cache::Memcached::RustXS::Zlib::compress_methods',
      new => sub { fast_client($_[0],
          compress_methods => Cache::Memcached::RustXS::Zlib::compress_methods()) } },
    { name => 'fast-ours-zstd', missing => \&fast_missing,
      about => 'Cache::Memcached::Fast, Cache::Memcached::RustXS::Zstd::compress_methods',
      new => sub { fast_client($_[0],
          compress_methods => Cache::Memcached::RustXS::Zstd::compress_methods(level => 3)) } },
    { name => 'fast-stock', missing => \&fast_missing,
      about => 'Cache::Memcached::Fast, its own gzip (control)',
      new => sub { fast_client($_[0]) } },
);
$_->{why_not} = $_->{missing}->() for @CLIENTS;
my @RUN = grep { !length $_->{why_not} } @CLIENTS;
plan skip_all => 'neither client can be used here: '
    . join('; ', map { $_->{why_not} } @CLIENTS[0, -1]) unless @RUN;

my @servers = CMRXTest::Memcached->start_or_skip(
    count => $SERVERS, args => \@MEMCACHED_ARGS);

my $SEED = int rand 2**31;
note "seed $SEED, scale $SCALE: ${SECONDS} s, $RESTARTS restarts, "
   . scalar(@RUN) . ' client processes';
checked_value('k0', 1, 'text');    # build the payload pools once, before fork

# ---- one client process -------------------------------------------------------

sub pick_keys {
    my ($count) = @_;
    my %keys;
    $keys{ 'k' . int rand $KEYS } = 1 while keys %keys < $count;
    return keys %keys;
}

# Work for $SECONDS; return the counts and a note per wrong value (up to
# $NOTES_MAX) and per distinct warning.
sub run_client {
    my ($spec, $index, $addresses) = @_;
    srand $SEED + $index;
    my %warned;
    local $SIG{__WARN__} = sub { (my $w = $_[0]) =~ s/\s+\z//; $warned{$w}++ };
    my $client = $spec->{new}->($addresses);
    my %n = map { $_ => 0 } qw(ops sets set_failed gets get_multis keys_read
                               verified misses wrong warnings our_warnings);
    my @notes;
    my @kinds = value_kinds();
    my $end = time + $SECONDS;
    while (time < $end && $n{ops} < $MAX_OPS) {
        $n{ops}++;
        my $roll = rand;
        if ($roll < $SET_SHARE) {
            my ($key) = pick_keys(1);
            my $size = int exp rand log $MAX_SIZE;
            $n{sets}++;
            $client->set($key, checked_value($key, $size || 1, $kinds[rand @kinds]))
                or $n{set_failed}++;
            next;
        }
        my ($op, @keys, $got);
        if ($roll < $SET_SHARE + $GET_SHARE) {
            @keys = pick_keys(1);
            $op = 'get';
            $n{gets}++;
            $got = { $keys[0] => scalar $client->get($keys[0]) };
        }
        else {
            @keys = pick_keys(2 + int rand($MULTI_MAX - 1));
            $op = 'get_multi(' . scalar(@keys) . ' keys)';
            $n{get_multis}++;
            $got = $client->get_multi(@keys) || {};
        }
        my %asked = map { $_ => 1 } @keys;
        my @wrong = map { "$op: key '$_' came back but was not asked for" }
                    grep { !$asked{$_} } sort keys %$got;
        for my $key (@keys) {
            $n{keys_read}++;
            if (!defined $got->{$key}) {
                $n{misses}++;
                next;
            }
            my $why = check_value($key, $got->{$key});
            if (length $why) { push @wrong, "$op: $key: $why" }
            else             { $n{verified}++ }
        }
        $n{wrong} += @wrong;
        push @notes, map { "wrong $_" } @wrong;
        splice @notes, $NOTES_MAX if @notes > $NOTES_MAX;
    }
    for my $w (sort keys %warned) {
        $n{warnings} += $warned{$w};
        my $ours = $w =~ m{Cache/Memcached/RustXS|Cache::Memcached::RustXS};
        $n{our_warnings} += $warned{$w} if $ours;
        push @notes, "warning ($warned{$w} times) $w";
    }
    return (\%n, @notes);
}

# ---- the run ----------------------------------------------------------------

my @proxies = map {
    CMRXTest::FaultProxy->start(backend => $servers[$_]->address,
        lanes => [ map { $_->{name} } @RUN ], seed => $SEED + 1_000 + $_)
} 0 .. $#servers;

my $t0 = time;
my @workers;
for my $i (0 .. $#RUN) {
    my $spec = $RUN[$i];
    my @addresses = map { $_->address_of($spec->{name}) } @proxies;
    push @workers, CMRXTest::Worker->start(
        name => $spec->{name}, run => sub { run_client($spec, $i, \@addresses) });
}

# Kill server $i with SIGKILL, keep it down a moment, start a new one (on a
# new port: the proxy's port is what the clients know).
sub restart {
    my ($i) = @_;
    $proxies[$i]->backend(undef);
    kill 'KILL', $servers[$i]->pid;
    $servers[$i]->stop;    # reaps it
    sleep $DOWN_MIN + rand $DOWN_SPREAD;
    $servers[$i] = CMRXTest::Memcached->start(args => \@MEMCACHED_ARGS);
    $proxies[$i]->backend($servers[$i]->address);
    return;
}

my @kills = map { [ $t0 + $_ * $SECONDS / ($RESTARTS + 1), ($_ - 1) % $SERVERS ] }
            1 .. $RESTARTS;
my $deadline = $t0 + $SECONDS + $GRACE;
my ($restarts, $restart_error) = (0, '');
while (1) {
    my $now = time;
    last if $now >= $deadline;
    if (@kills && $now >= $kills[0][0]) {
        my (undef, $i) = @{ shift @kills };
        if (eval { restart($i); 1 }) { $restarts++ }
        else { ($restart_error = $@) =~ s/\s+\z//; @kills = () }
        next;
    }
    my $until = @kills && $kills[0][0] < $deadline ? $kills[0][0] : $deadline;
    last unless CMRXTest::Worker->poll(\@workers, $until - $now);
}
my @late = CMRXTest::Worker->kill_unfinished(\@workers,
    'not done ' . ($SECONDS + $GRACE) . ' s after the start (hung)');
my $elapsed = time - $t0;
my %counts_of = map { $_ => $_->counts } @proxies;

# ---- what happened ----------------------------------------------------------

my @CUTS = grep { /\Acut_/ } CMRXTest::FaultProxy->count_names;
my (%proxy, %cut_total);
for my $spec (@RUN) {
    my %sum;
    for my $p (@proxies) {
        my $lane = $counts_of{$p}{ $spec->{name} };
        $sum{$_} += $lane->{$_} for keys %$lane;
    }
    $cut_total{$_} += $sum{$_} for @CUTS;
    $sum{cut} = 0;
    $sum{cut} += $sum{$_} for @CUTS;
    $proxy{ $spec->{name} } = \%sum;
}

my %result = map { $_->name => $_->result } @workers;
# Per client: operations (sets, gets, get_multis), keys read, values that
# checked, misses, wrong values; connections accepted by the proxies,
# refused while a server was down, cut by plan, lost with a killed server;
# warnings (of any code).
my $format = "%-17s %5s %5s %4s %5s %6s %8s %6s %5s %5s %7s %4s %4s %5s\n";
note sprintf "%.1f s; memcached killed (SIGKILL) and started again: %d times\n",
    $elapsed, $restarts;
note sprintf $format, qw(client ops sets gets multi keys verified misses wrong
                         conns refused cut lost warns);
for my $spec (@RUN) {
    my $c = $result{ $spec->{name} }{counts};
    my $p = $proxy{ $spec->{name} };
    note sprintf $format, $spec->{name},
        (map { $c->{$_} // '-' } qw(ops sets gets get_multis keys_read verified
                                    misses wrong)),
        (map { $p->{$_} } qw(conns refused cut backend_lost)),
        $c->{warnings} // '-';
}
note 'cuts by kind: ' . join ', ', map { (my $k = $_) =~ s/\Acut_//; "$k $cut_total{$_}" } @CUTS;
note "$_->{name}: $_->{about}" for @RUN;
for my $w (@workers) {
    note $w->name . ": $_" for grep { /\Awarning / } @{ $w->result->{notes} };
}

for my $spec (@CLIENTS) {
    my $name = $spec->{name};
    SKIP: {
        skip "$name: $spec->{why_not}", 5 if length $spec->{why_not};
        my $r = $result{$name};
        my $c = $r->{counts};
        ok $r->{ok}, "$name: ran to the end and reported (no death, no hang)"
            or diag "$name: $r->{error}";
        skip "$name: no report to judge", 4 unless $r->{ok};
        is $c->{wrong}, 0, "$name: no value came back wrong"
            or diag join "\n", grep { /\Awrong / } @{ $r->{notes} };
        cmp_ok $c->{verified}, '>', 0, "$name: values came back and checked";
        cmp_ok $proxy{$name}{cut}, '>', 0, "$name: its connections were cut";
        is $c->{our_warnings}, 0, "$name: no warning from our modules";
    }
}

is $restart_error, '', 'every restart of memcached worked';
is $restarts, $RESTARTS, "memcached was killed and started again $RESTARTS times";
for my $kind (qw(cut_value_line cut_data cut_before_end)) {
    cmp_ok $cut_total{$kind}, '>', 0, "connections were cut: $kind";
}

done_testing;
