#!/usr/bin/perl
# Preforking servers: a parent that loads a dictionary set before it forks
# (load_dictionaries: every dictionary prepared at its level at load) shares
# the prepared dictionaries with its workers, copy-on-write; loaded file by
# file (load_dictionary: compression tables made at first use), each worker
# makes its own. Measured per worker as the growth of its Private_Dirty
# (/proc/PID/smaps_rollup) from just after the fork to after it compressed
# and decompressed a value with every dictionary of the set (four 16 KiB
# dictionaries at level 9, on the real values of bench/data/values).
#
# What is asserted is what holds on any machine: the lazily prepared
# workers' private memory grows by at least 128 KiB more per dictionary
# than the prepared ones' (measured here: about 350 KiB per dictionary at
# level 9), and the prepared workers share more. The numbers are printed
# (prove -v). Skips without /proc/self/smaps_rollup (Linux 4.14 and newer).
use strict;
use warnings;

use lib 't/lib', 'dev/lib';
use Test::More;
use File::Temp ();
use Cache::Memcached::RustXS::Zstd qw(train_dictionary load_dictionary load_dictionaries compress decompress);
use Cache::Memcached::RustXS::Zstd::DictionarySet;
use CMRXDev::Corpus qw(corpus_values);
use CMRXTest::Child qw(in_child);

plan skip_all => 'no /proc/self/smaps_rollup (Linux 4.14 and newer have it)'
    unless -r '/proc/self/smaps_rollup';

my $WORKERS        = 3;
my $LEVEL          = 9;
my $DICT_SIZE      = 16 * 1024;
my $MIN_SAVED_KB   = 128;    # per dictionary and worker, at the least
my @FAMILIES       = qw(api npm gh news);

my $TMP = File::Temp->newdir;
my $corpus = corpus_values('bench/data/values');
my %V = map { my $f = $_; ($f => [ map { $_->[1] } @{ $corpus->{$f} } ]) } @FAMILIES;
my $dir = "$TMP/set";
{
    my $s = Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
    my $id = 1;
    $s->add(prefix => "$_:", dictionary => train_dictionary($V{$_}, size => $DICT_SIZE),
            level => $LEVEL, id => $id++) for @FAMILIES;
    $s->write;
}

# This process's memory, from smaps_rollup: { Private_Dirty => kB, ... }.
sub rollup {
    open my $fh, '<', '/proc/self/smaps_rollup' or die "smaps_rollup: $!";
    my %kb;
    while (<$fh>) { $kb{$1} = $2 if /^(\w+):\s+(\d+) kB/ }
    return \%kb;
}

# A server process that loads the set ($how: 'prepared' by
# load_dictionaries, 'lazy' by load_dictionary of each file), then forks
# its workers one after another; each worker uses every dictionary once and
# reports its Private_Dirty growth and Shared_Dirty. Returns
# ([growth kB, shared kB, ok], ...) per worker.
sub server {
    my ($how) = @_;
    my ($workers) = in_child(sub {
        my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
        if ($how eq 'prepared') { load_dictionaries($dir) }
        else { load_dictionary($set->path_of($_->{id})) for $set->entries }
        my @entries = $set->entries;
        return [ map {
            my ($report) = in_child(sub {
                my $before = rollup();
                my $ok = 1;
                for my $e (@entries) {
                    my ($family) = $e->{prefix} =~ /\A(\w+):/;
                    my $value = $V{$family}[0];
                    my $frame = compress($value, level => $e->{level}, dictionary => $e->{id});
                    $ok &&= (decompress($frame) // '') eq $value;
                }
                my $after = rollup();
                return [ $after->{Private_Dirty} - $before->{Private_Dirty},
                         $after->{Shared_Dirty}, $ok ? 1 : 0 ];
            });
            $report ? $report : ();
        } 1 .. $WORKERS ];
    });
    return @{ $workers || [] };
}

my @prepared = server('prepared');
my @lazy     = server('lazy');
is scalar @prepared, $WORKERS, "every prepared worker reported" or diag explain \@prepared;
is scalar @lazy, $WORKERS, "every lazily prepared worker reported" or diag explain \@lazy;
ok !grep({ !$_->[2] } @prepared, @lazy), 'every worker decoded what it compressed';

my $dicts = @FAMILIES;
for my $i (0 .. $WORKERS - 1) {
    my ($p, $l) = ($prepared[$i], $lazy[$i]);
    next unless $p && $l;
    note sprintf 'worker %d: Private_Dirty grew %d kB (set loaded before fork) vs %d kB (files loaded, '
               . 'prepared at first use); Shared_Dirty %d vs %d kB', $i + 1, $p->[0], $l->[0], $p->[1], $l->[1];
    cmp_ok $l->[0] - $p->[0], '>=', $dicts * $MIN_SAVED_KB,
        sprintf 'worker %d: %d dictionaries prepared before fork save it at least %d kB of private memory (%d kB)',
                $i + 1, $dicts, $dicts * $MIN_SAVED_KB, $l->[0] - $p->[0];
    cmp_ok $p->[1], '>', $l->[1], sprintf 'worker %d: and it shares more with its parent', $i + 1;
}

done_testing;
