#!/usr/bin/perl
# A fleet rolls a dictionary set forward and back with one deploy each, on a
# real memcached: three hosts, each with its own copy of the set's folder
# and its own processes (a Cache::Memcached::Fast object for the whole
# application and one for the prefix gh:, a Cache::Memcached::RustXS::Memcached,
# a Cache::Memcached reader with our GetParser), all reading and writing
# the same keys the whole time. A retrained set, its dictionaries staged,
# reaches the hosts at different moments inside the staging delay; once it
# has taken effect, the rollback an operator runs (cmrx-dict rollback
# --prefix P --stage, no --to: the module function it calls), staged and
# shipped the same way, goes back to the first dictionaries. No value is read
# back wrong, no read misses (every key is stored before the processes
# start and memcached never evicts), no process restarts, every writer
# writes the new dictionaries only from their time and the old ones again
# after the rollback's.
#
# About 20 s; it runs alone in .ci/run (it makes its own load). Skips
# without memcached or Cache::Memcached; without Cache::Memcached::Fast,
# the Fast processes are left out.
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Copy ();
use File::Temp ();
use Time::HiRes ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary frame_dictionary_id);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Clients qw(fast_missing cache_memcached_missing);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set raw_get);
use CMRXTest::Worker;
use Cache::Memcached::RustXS::Dict::Rollout qw(rollback_set);
use Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest ();

plan skip_all => cache_memcached_missing() if cache_memcached_missing();
my $server = CMRXTest::Memcached->start_or_skip;
my $ADDR   = $server->address;
my $Set    = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $TMP    = File::Temp->newdir;
my $RESCAN = 1;       # seconds: every process's rescan_interval
my $STAGE  = 5;       # seconds from a set's shipping to its staged time
my $HOSTS  = 3;
my $F_COMPRESS = 2;

# The values: gh: and npm: keys, each with its one right value.
my $corpus = corpus_values('bench/data/values');
my %train = (gh => [ map { $_->[1] } @{ $corpus->{gh} }[0 .. 59] ],
             npm => [ map { $_->[1] } @{ $corpus->{npm} }[0 .. 59] ]);
my %VALUE;
for my $family (qw(gh npm)) {
    my @v = map { $_->[1] } @{ $corpus->{$family} };
    $VALUE{"$family:$_"} = $v[$_] for 0 .. $#v;
}
my @KEYS = sort keys %VALUE;
raw_set($ADDR, $_, $F_COMPRESS, Compress::Zlib::memGzip($VALUE{$_})) for @KEYS;    # as a stock client wrote them

# The first set, on every host; the second trained again, staged.
my $master = "$TMP/master";
my $set = $Set->create($master);
my %first = (
    'gh:'  => $set->add(prefix => 'gh:', dictionary => train_dictionary($train{gh}, size => 4096), level => 3,
                        id => $set->new_id)->{id},
    'npm:' => $set->add(prefix => 'npm:', dictionary => train_dictionary($train{npm}, size => 4096), level => 3,
                        id => $set->new_id)->{id},
    ''     => $set->add(prefix => '', dictionary => train_dictionary([ @{ $train{gh} }, @{ $train{npm} } ],
                        size => 4096), level => 3, id => $set->new_id)->{id},
);
$set->write;
my @host = map { "$TMP/host$_" } 1 .. $HOSTS;
ship($_) for @host;

# Copies the master folder to a host as a deploy tool would: the files it
# lacks, then the manifest through a rename.
sub ship {
    my ($dir) = @_;
    mkdir $dir unless -d $dir;
    opendir my $dh, $master or die $!;
    for my $f (grep { /\.dict\z/ } readdir $dh) {
        File::Copy::copy("$master/$f", "$dir/$f") or die "$f: $!" unless -e "$dir/$f";
    }
    File::Copy::copy("$master/manifest", "$dir/manifest.new") or die $!;
    rename "$dir/manifest.new", "$dir/manifest" or die $!;
    return;
}

# ---- the processes ---------------------------------------------------------

my $run_until = Time::HiRes::time() + 60;    # the parent stops them earlier
my $stop_file = "$TMP/stop";

sub worker_loop {
    my ($kind, $dir) = @_;
    my ($read, $write) = client($kind, $dir);
    my (%c, @notes);
    $c{pid} = $$;
    my @mine = $kind eq 'fast-gh' ? grep({ /\Agh:/ } @KEYS) : @KEYS;
    srand($$);
    until (-e $stop_file || Time::HiRes::time() > $run_until) {
        if ($write && rand() < 0.3) {
            my $key = $mine[ rand @mine ];
            # The write happened between $before and $after (in whole ms, as
            # the counts are numbers): a process may be paused on this busy
            # machine between reading the clock and writing, or another
            # process may write the key before raw_get reads it. "first"
            # keeps the latest the write can have been, "last" the earliest,
            # so neither check can blame a dictionary for its neighbour's time.
            my $before = int(1000 * Time::HiRes::time());
            $write->($key, $VALUE{$key}) or next;
            my ($flags, $data) = raw_get($ADDR, $key);
            my $after = int(1000 * Time::HiRes::time()) + 1;
            my $id = defined $data ? frame_dictionary_id($data) : undef;
            $id = 'none' unless $id;
            $c{"wrote_$id"}++;
            $c{"first_$id"} = $after unless defined $c{"first_$id"};
            $c{"last_$id"} = $before;
            next;
        }
        my @ask = map { $mine[ rand @mine ] } 1 .. 10;
        my $got = $read->(@ask);
        for my $key (@ask) {
            $c{reads}++;
            if (!defined $got->{$key}) {
                $c{misses}++;
                my ($flags, $data) = raw_get($ADDR, $key);
                push @notes, sprintf('miss %s at %.3f: stored flags %s, dictionary %s', $key,
                                     Time::HiRes::time(), $flags, defined $data ? frame_dictionary_id($data) : '-')
                    if @notes < 5;
            }
            elsif ($got->{$key} ne $VALUE{$key}) { $c{wrong}++ }
        }
    }
    return (\%c, @notes);
}

# (a reader: keys -> { key => value }, a writer: (key, value) -> true) of
# each kind of process, on the host's copy of the set.
sub client {
    my ($kind, $dir) = @_;
    my @servers = (servers => [$ADDR]);
    if ($kind =~ /\Afast/) {
        require Cache::Memcached::Fast;
        my $fast = Cache::Memcached::Fast->new({
            @servers, compress_threshold => 100,
            compress_methods => Cache::Memcached::RustXS::Zstd::compress_methods(
                dictionaries => $dir, rescan_interval => $RESCAN, $kind eq 'fast-gh' ? (prefix => 'gh:') : ()),
        });
        return (sub { $fast->get_multi(@_) }, sub { $fast->set(@_) });
    }
    if ($kind eq 'memcached') {
        require Cache::Memcached::RustXS::Memcached;
        my $memd = Cache::Memcached::RustXS::Memcached->new({
            @servers, compress_threshold => 100,
            zstd => { dictionaries => $dir, rescan_interval => $RESCAN },
        });
        return (sub { $memd->get_multi(@_) }, sub { $memd->set(@_) });
    }
    require Cache::Memcached;
    require Cache::Memcached::RustXS::GetParser;
    Cache::Memcached::RustXS::Zstd::load_dictionaries($dir, rescan_interval => $RESCAN);
    my $memd = Cache::Memcached->new({ @servers, parser_class => 'Cache::Memcached::RustXS::GetParser' });
    return (sub { $memd->get_multi(@_) }, undef);
}

my @kinds = ((fast_missing() ? () : ('fast', 'fast-gh')), 'memcached', 'reader');
my @workers;
for my $h (0 .. $#host) {
    for my $kind (@kinds) {
        push @workers, CMRXTest::Worker->start(name => "host" . ($h + 1) . " $kind",
                                               run => sub { worker_loop($kind, $host[$h]) });
    }
}
Time::HiRes::sleep(2);

# ---- forward: a retrained set, shipped host by host ------------------------

my %retrained = map {
    my $values = length $_ ? $train{ substr $_, 0, -1 } : [ @{ $train{gh} }, @{ $train{npm} } ];
    ($_ => train_dictionary([ reverse @$values ], size => 8192));
} keys %first;
$set = $Set->read($master);
my $forward_at = int(time) + $STAGE;    # the manifest keeps whole seconds
my %second = map {
    ($_ => $set->add(prefix => $_, dictionary => $retrained{$_}, level => 3, id => $set->new_id,
                     current_from => $forward_at)->{id});
} keys %first;
$set->write;
for my $h (@host) {    # the last host gets it with a rescan interval to spare
    ship($h);
    Time::HiRes::sleep(($STAGE - 2 * $RESCAN) / $HOSTS);
}
Time::HiRes::sleep(0.1) while time < $forward_at + 3;

# ---- back: the default rollback, after the retrain took effect ------------

# The master's manifest still says the retrained dictionaries are staged
# (nothing wrote it since their time); the rollback must read them as current.
my (%back_to, @back_at);
for my $prefix (sort keys %first) {
    my $r = rollback_set(dir => $master, prefix => $prefix, stage => $STAGE);
    $back_to{$prefix} = $r->{to};
    push @back_at, Cache::Memcached::RustXS::Zstd::DictionarySet::Manifest::epoch_of($r->{current_from});
}
is_deeply \%back_to, \%first, 'the default rollback after the retrain took effect: back to the first dictionaries';
my ($back_at) = sort { $b <=> $a } @back_at;    # the latest of the prefixes' times
for my $h (reverse @host) {
    ship($h);
    Time::HiRes::sleep(($STAGE - 2 * $RESCAN) / $HOSTS);
}
Time::HiRes::sleep(0.1) while time < $back_at + 3;
open my $stop, '>', $stop_file or die $!;
close $stop;

# ---- what the processes saw ------------------------------------------------

CMRXTest::Worker->poll(\@workers, 30);
CMRXTest::Worker->kill_unfinished(\@workers, 'did not stop');
my %is_second = map { ($_ => 1) } values %second;
my %is_first  = map { ($_ => 1) } values %first;
for my $w (@workers) {
    my $r = $w->result;
    ok $r && !$r->{died}, $w->name . ': ran throughout' or do { diag explain $r; next };
    my $c = $r->{counts};
    ok $c->{reads} > 100, $w->name . ": read $c->{reads} values";
    is $c->{wrong} || 0, 0, $w->name . ': none wrong';
    is $c->{misses} || 0, 0, $w->name . ': no miss' or diag join "\n", @{ $r->{notes} },
        "forward at $forward_at, back at $back_at";
    next if $w->name =~ /reader/;
    my @second = grep { $c->{"wrote_$_"} } keys %is_second;
    ok @second, $w->name . ': wrote with the retrained set';
    ok !(grep { $c->{"first_$_"} < 1000 * $forward_at } @second), '... never before its time'
        or diag "forward at ${forward_at}000 ms: ", explain({ map { ($_ => $c->{"first_$_"}) } @second });
    ok !(grep { $c->{"last_$_"} >= 1000 * $back_at } @second), '... and not after the default rollback\'s'
        or diag "back at ${back_at}000 ms: ", explain({ map { ($_ => $c->{"last_$_"}) } @second });
    my @back = grep { $c->{"wrote_$_"} && $c->{"last_$_"} >= 1000 * $back_at } keys %is_first;
    ok @back, $w->name . ': wrote with the first set again after the rollback';
    my @others = grep { !$is_first{$_} && !$is_second{$_} } map { /\Awrote_(.+)/ ? $1 : () } keys %$c;
    is_deeply \@others, [], '... and with no other dictionary' or diag explain $c;
}

done_testing;
