#!/usr/bin/perl
# cmrx-dict train --all stages what it adds: by default, for an hour
# (--stage), writers go on with what they used (the prefix's dictionary
# before, or the fallback) while the set reaches every host; list shows
# them staged and the output says from when. --stage 0 makes them current
# at once. A rerun within the stage is decided against
# the staged dictionaries (nothing staged twice). Every dictionary gets a
# random 32-bit ID from 65536 up, and a set trained from a server never
# gives an ID that the server's sampled values name: the draw is rigged,
# in a child process, to offer such an ID first. Cheap: @FIXED_TUNING and
# two prefixes (--prefix: no whole-cache entry to tune).
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use POSIX ();
use Time::HiRes ();
use Time::Local ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXTest::Child qw(in_child);
use CMRXTest::DictSets qw(corpus_halves run_dict write_dump json_of by_prefix @FIXED_TUNING %FIXED_TUNING
                          @AT_ONCE);
use CMRXTest::Memcached;
use CMRXTest::Raw qw(raw_set);

my $HAVE_JSON = eval { require JSON::PP; 1 };
my $Set = 'Cache::Memcached::RustXS::Zstd::DictionarySet';
my $TMP = File::Temp->newdir;
my $HOUR = 3600;                 # train --all's default --stage
my $FIRST_RANDOM_ID = 65536;     # new_id draws from here up
my ($train, $held) = corpus_halves(qw(npm compat));
my @PREFIXES = map { ('--prefix', $_) } qw(npm compat);

sub date { POSIX::strftime('%Y-%m-%dT%H:%M:%SZ', gmtime $_[0]) }

sub epoch {
    my @t = $_[0] =~ /\A(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)Z\z/ or return;
    return Time::Local::timegm(@t[ 5, 4, 3, 2 ], $t[1] - 1, $t[0]);
}

# What writers made now, in a process that has not loaded the set, do:
# the dictionary ID that a writer of each prefix names when it compresses
# a value of it (0: the fallback's frame, no dictionary), and whether
# frames naming each of @loaded decode there (readers have them).
sub writers_now {
    my ($dir, %value_of) = @_;
    my @loaded = @{ delete $value_of{loaded} || [] };
    my ($result) = in_child(sub {
        # (A writer of a prefix whose dictionary is staged says that the
        # prefix matches none yet.)
        local $SIG{__WARN__} = sub { warn @_ unless $_[0] =~ /matches no dictionary of the set/ };
        my %id;
        for my $prefix (sort keys %value_of) {
            my $m = Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => $prefix);
            my ($value, $frame) = ($value_of{$prefix});
            $m->[0]->(\$value, \$frame) or die "the writer of $prefix declined\n";
            $id{$prefix} = Cache::Memcached::RustXS::Zstd::frame_dictionary_id($frame) || 0;
        }
        my ($sample) = values %value_of;
        my %decodes = map {
            my $frame = Cache::Memcached::RustXS::Zstd::compress($sample, level => 3, dictionary => $_);
            ($_ => Cache::Memcached::RustXS::Zstd::decompress($frame) eq $sample ? 1 : 0);
        } @loaded;
        return { ids => \%id, decodes => \%decodes };
    });
    return $result || {};
}

my %value = ('npm:' => $held->{npm}[0][1], 'compat:' => $held->{compat}[0][1]);

# ---- --stage 0: current at once --------------------------------------------------

my $dir = "$TMP/set";
my $few = write_dump("$TMP/few.values", @{ $train->{npm} }[0 .. 15]);
my $before = time;
my ($st, $out, $err) = run_dict([ 'train', '--all', @AT_ONCE, '--out-dir', $dir, @FIXED_TUNING, @PREFIXES, $few ]);
is $st, 0, 'train --all --stage 0 on 16 npm values: exit 0' or diag $err;
my ($at_once) = $out =~ /^Current from (\S+), at once \(--stage 0\): writers use the added dictionaries/m;
ok defined $at_once && $at_once ge date($before) && $at_once le date(time),
    'it says the added dictionaries are current from now, at once (' . ($at_once || 'not said') . ')' or diag $out;
my $set = $Set->read($dir);
my $first = $set->current('npm:');
ok $first, "the set: npm:'s dictionary is current at once";
cmp_ok $first && $first->{id}, '>=', $FIRST_RANDOM_ID, '... under a random 32-bit ID (' . ($first && $first->{id}) . ')';
is writers_now($dir, 'npm:' => $value{'npm:'})->{ids}{'npm:'}, $first->{id}, '... which a writer made now writes';

# ---- the default: staged an hour ----------------------------------------------------

my $more = write_dump("$TMP/more.values", @{ $train->{npm} }, @{ $train->{compat} });
my @retrain = ('train', '--all', '--out-dir', $dir, @FIXED_TUNING, @PREFIXES, '--if-better', '1', $more);
$before = time;
($st, $out, $err) = run_dict(\@retrain);
my $finished = Time::HiRes::time();
is $st, 0, 'train --all (no --stage) on every npm and compat value: exit 0' or diag $err;
like $out, qr/^\s+npm:\s+replaced\s/m, '... npm: gets a new dictionary';
like $out, qr/^\s+compat:\s+added\s/m, '... compat: gets one';
my ($from) = $out =~ /^Staged: current from (\S+) \(--stage 1h\): writers use the added dictionaries from then: ship the set to every host before\.$/m;
ok defined $from && $from gt date($before + $HOUR) && $from le date(time + $HOUR + 2),
    'it says they are staged: current from an hour after the set was written (' . ($from || 'not said') . ')' or diag $out;
$from = date(time + $HOUR) unless defined $from;
cmp_ok epoch($from), '>=', $finished + $HOUR, '... at least --stage after the command finished';

$set = $Set->read($dir);
my ($npm) = grep { $_->{prefix} eq 'npm:' && $_->{id} != $first->{id} } $set->entries;
my ($compat) = grep { $_->{prefix} eq 'compat:' } $set->entries;
ok $npm && $compat, 'the set has the two new dictionaries';
is $set->current('npm:')->{id}, $first->{id}, "... npm:'s dictionary before stays current";
ok !$set->current('compat:'), '... compat: has none yet (the fallback)';
is $set->current('npm:', at => epoch($from))->{id}, $npm->{id}, '... the new npm: one is current from then';
is $set->current('compat:', at => epoch($from))->{id}, $compat->{id}, '... and so is compat:\'s';
ok !(grep { $_->{id} < $FIRST_RANDOM_ID } $set->entries), 'every ID is a random one from 65536 up ('
    . join(', ', map { $_->{id} } $set->entries) . ')';

($st, $out, $err) = run_dict([ 'list', '--dictionaries', $dir ]);
is $st, 0, 'list: exit 0' or diag $err;
like $out, qr/^\s+\Q$npm->{id}\E\s+npm:\s+staged\s+\Q$from\E\s/m, 'list: the new npm: dictionary staged, from then';
like $out, qr/^\s+\Q$compat->{id}\E\s+compat:\s+staged\s+\Q$from\E\s/m, '... and compat:\'s';
like $out, qr/^\s+\Q$first->{id}\E\s+npm:\s+current\s/m, '... the one before current';

my $now = writers_now($dir, %value, loaded => [ $npm->{id}, $compat->{id} ]);
is_deeply $now->{ids}, { 'npm:' => $first->{id}, 'compat:' => 0 },
    'writers made right after write the dictionary before (npm:) and the fallback (compat:)';
is_deeply $now->{decodes}, { $npm->{id} => 1, $compat->{id} => 1 }, '... and have the staged ones for reading';

# ---- a rerun within the stage ----------------------------------------------------------

{
    ($st, $out, $err) = run_dict([ @retrain, $HAVE_JSON ? '--json' : () ]);
    is $st, 0, 'the same train --all again within the stage: exit 0' or diag $err;
    if ($HAVE_JSON) {
        my $json = json_of($out);
        my $p = by_prefix($json);
        is_deeply [ map { $p->{$_}{action} } qw(npm: compat:) ], [qw(kept kept)],
            'the same train --all again within the stage: both kept (measured against the staged ones)';
        is $json->{stage}, $HOUR, '... --json gives the stage';
        ok !exists $json->{current_from}, '... and no current_from: nothing was added';
    }
    else {
        like $out, qr/^\s+npm:\s+kept\s.*^\s+compat:\s+kept\s/ms,
            'the same train --all again within the stage: both kept (measured against the staged ones)';
        unlike $out, qr/^Staged:/m, '... nothing staged';
        SKIP: { skip 'JSON::PP is not installed: the JSON not checked', 1 }
    }
    is scalar(() = $Set->read($dir)->entries), 3, '... the set is as it was';
}

# ---- IDs that sampled values name are never given ---------------------------------------

{
    my $server = CMRXTest::Memcached->start_or_skip_rest;
    my $addr = $server->address;
    # Stored values naming $named: zstd frames made, in a child process, with
    # a dictionary under that ID (this process and the next never load it).
    my $named = 3_000_000_017;
    my @compat = @{ $train->{compat} };
    my ($frames) = in_child(sub {
        my $dict = Cache::Memcached::RustXS::Zstd::dictionary_with_id(
            Cache::Memcached::RustXS::Zstd::train_dictionary([ map { $_->[1] } @compat ], size => 4096), $named);
        my $file = "$TMP/named.dict";
        open my $fh, '>', $file or die "$file: $!";
        binmode $fh;
        print {$fh} $dict;
        close $fh or die "$file: $!";
        Cache::Memcached::RustXS::Zstd::load_dictionary($file);
        return [ map { Cache::Memcached::RustXS::Zstd::compress($_->[1], level => 3, dictionary => $named) }
                 @compat[0 .. 2] ];
    });
    die 'no frames' unless $frames;
    raw_set($addr, $_->[0], 0, $_->[1]) or die "set $_->[0]" for @compat;
    raw_set($addr, "compat:named$_", 2, $frames->[$_]) or die 'set' for 0 .. $#$frames;

    # The draw offers $named first, then another ID: the set must take the other.
    my $other = 123_456_789;
    my ($r) = in_child(sub {
        require Cache::Memcached::RustXS::Dict::SetTrainer;
        require Cache::Memcached::RustXS::Dict::NodeReader;
        require Cache::Memcached::RustXS::Dict::SlabModel;
        require Cache::Memcached::RustXS::Dict::Report::Dictionaries;
        my @draws = map { $_ - $FIRST_RANDOM_ID } $named, $other;
        no warnings 'redefine';
        local *Cache::Memcached::RustXS::Zstd::DictionarySet::IDs::random_u32 = sub { @draws ? shift @draws : 42 };
        my $source = Cache::Memcached::RustXS::Dict::NodeReader->connect($addr);
        my $r = Cache::Memcached::RustXS::Dict::SetTrainer::train_all(
            %FIXED_TUNING, dir => "$TMP/from-server", source => $source, delimiter => ':', sample => 1000,
            memory => Cache::Memcached::RustXS::Dict::SlabModel->from_server($source), prefixes => ['compat'],
            compress_time => 0, decompress_time => 0);
        my $data = Cache::Memcached::RustXS::Dict::Report::Dictionaries::set_data($r);
        return { named => $r->{dictionary_ids}, ids => [ map { $_->{id} } $r->{set}->entries ],
                 map { ($_ => $data->{$_}) } qw(stage current_from prefixes) };
    });
    $r ||= {};
    is_deeply $r->{named}, { $named => 3 }, "train --all --server: the sampled values name ID $named";
    is_deeply $r->{ids}, [$other], '... the draw offered it first, and the set took the next one instead';
    my ($p) = grep { $_->{prefix} eq 'compat:' } @{ $r->{prefixes} || [] };
    is $p && $p->{state}, 'staged', '... staged (the data --json prints: state)';
    is $r->{stage}, $HOUR, '... stage';
    ok $r->{current_from} && $r->{current_from} ge date($before + $HOUR), '... and current_from, an hour on';
}

done_testing;
