#!/usr/bin/perl
# What a loaded dictionary costs a process's memory: for 16 KiB
# dictionaries trained on the corpus's families, the growth of a fresh
# process's private memory (Private_Dirty, /proc/self/smaps_rollup) when it
#   - loads a dictionary set (load_dictionaries: every dictionary prepared
#     for writing and reading at its level at once), and
#   - loads the same dictionaries one file at a time (load_dictionary) and
#     uses each once, compressing and decompressing one value at the level,
# for 1 and 4 dictionaries, at levels 3 and 9; a dictionary's own cost is
# the difference between the two divided by 3 (the first pays for what any
# process using zstd allocates once: contexts, buffers).
#
#   perl -Mblib bench/dict-memory.pl      # seconds; Linux only (smaps_rollup)
use strict;
use warnings;
use FindBin ();
use lib "$FindBin::Bin/lib", "$FindBin::Bin/../dev/lib";
use File::Temp ();
use POSIX ();

use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Zstd::DictionarySet ();
use CMRXDev::Corpus qw(corpus_values);

-r '/proc/self/smaps_rollup' or die "needs /proc/self/smaps_rollup (Linux 4.14 or newer)\n";

my $SIZE = 16 << 10;
my $corpus = corpus_values("$FindBin::Bin/data/values");
my @families = (sort keys %$corpus)[0 .. 3];
my %dict = map {
    my @v = map { $_->[1] } @{ $corpus->{$_} };
    ($_ => Cache::Memcached::RustXS::Zstd::train_dictionary(\@v, size => $SIZE));
} @families;
my %value = map { ($_ => $corpus->{$_}[0][1]) } @families;

sub private_dirty_kib {
    open my $fh, '<', '/proc/self/smaps_rollup' or die "smaps_rollup: $!\n";
    while (<$fh>) { return $1 if /^Private_Dirty:\s+(\d+) kB/ }
    die "no Private_Dirty in smaps_rollup\n";
}

# Runs $work in a fresh child; returns the growth of its Private_Dirty.
sub growth_in_child {
    my ($work) = @_;
    pipe my $r, my $w or die "pipe: $!\n";
    my $pid = fork // die "fork: $!\n";
    if (!$pid) {
        close $r;
        my $before = private_dirty_kib();
        $work->();
        print {$w} private_dirty_kib() - $before;
        close $w;
        POSIX::_exit(0);
    }
    close $w;
    my $kib = <$r>;
    waitpid $pid, 0;
    die "the child failed\n" if $? || !defined $kib;
    return $kib;
}

my $tmp = File::Temp->newdir;
my %kib;    # level => how => dictionaries => KiB
for my $level (3, 9) {
    for my $n (1, 4) {
        my @fams = @families[0 .. $n - 1];
        my $dir = "$tmp/set-$level-$n";
        my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->create($dir);
        $set->add(prefix => "$_:", dictionary => $dict{$_}, level => $level, id => $set->new_id) for @fams;
        $set->write;
        my @files = map { "$dir/$_->{file}" } grep { $_->{file} } map { $_->{entry} } $set->schedule;
        $kib{$level}{set}{$n} = growth_in_child(sub {
            Cache::Memcached::RustXS::Zstd::load_dictionaries($dir);
        });
        $kib{$level}{file}{$n} = growth_in_child(sub {
            for my $i (0 .. $#files) {
                my $id = Cache::Memcached::RustXS::Zstd::load_dictionary($files[$i]);
                my $frame = Cache::Memcached::RustXS::Zstd::compress($value{ $fams[$i] }, level => $level, dictionary => $id);
                Cache::Memcached::RustXS::Zstd::decompress($frame) eq $value{ $fams[$i] } or die "round trip failed\n";
            }
        });
    }
}
my %how = (set => 'load_dictionaries (a set: prepared at once)',
           file => 'load_dictionary, one compress and decompress');
printf "16 KiB dictionaries; growth of a fresh process's Private_Dirty, KiB\n";
printf "%-48s %5s %8s %8s %14s\n", 'how', 'level', '1 dict', '4 dicts', 'per dictionary';
for my $how (qw(set file)) {
    for my $level (3, 9) {
        my $k = $kib{$level}{$how};
        printf "%-48s %5d %8d %8d %14.0f\n", $how{$how}, $level, $k->{1}, $k->{4}, ($k->{4} - $k->{1}) / 3;
    }
}
