package CMRXBench::Memory;

# What bench/memory.pl, bench/hitrate.pl and bench/app.pl share: the corpus
# split in a training half and a fill half, the dictionary set `cmrx-dict
# train --all` makes of the training half (from a file, or from a live
# node holding it), the key population spread over
# the fill half and the Zipf distribution over it, the ways of writing
# through Cache::Memcached::Fast, a memcached's stats, and the text tables.

use strict;
use warnings;
use Exporter 'import';
use File::Basename ();
use File::Spec ();
use Compress::Zlib ();
use Cache::Memcached::RustXS::Dict::NodeReader ();
# corpus_halves ((\%train, \%fill): the half of bench/data/values to train
# on, and the half to write) is the tests' too: exported from here for the
# scripts.
use CMRXDev::Corpus qw(corpus_halves);

our @EXPORT_OK = qw(corpus_halves train_set live_node run_cmrx_dict small_id_copy key_of shuffled_ids
                    zipf_cdf zipf_rank zipf_guide zipf_rank_guided check_zipf_guide
                    gzip_methods set_methods one_object_methods stats commas table);

# The distribution's folder, from this file's place in it (bench/lib/CMRXBench):
# the same for the scripts and for an app that Starman loads.
my $ROOT = File::Spec->rel2abs(File::Basename::dirname(__FILE__) . '/../../..');

# Runs `cmrx-dict train --all --stage 0 --out-dir $dir FILE`, no other
# option (--stage 0: what it adds is current at once, for the writers that
# fill right after; by default it is staged an hour), on a get response
# holding @$items ([key, bytes] each: the bytes as memcached would store
# them), its report going to $log. Returns $dir.
sub train_set {
    my (%o) = @_;
    my ($dir, $log, $items) = @o{qw(dir log items)};
    my $dump = "$dir.values";
    open my $fh, '>:raw', $dump or die "$dump: $!\n";
    print {$fh} "VALUE $_->[0] 0 " . length($_->[1]) . "\r\n$_->[1]\r\n" for @$items;
    print {$fh} "END\r\n";
    close $fh or die "$dump: $!\n";
    my @inc = map { ('-I', $_) } grep { !ref } @INC;
    my $cmd = join ' ', map { "'$_'" } $^X, @inc, "$ROOT/bin/cmrx-dict", 'train', '--all', '--stage', '0', '--out-dir', $dir,
                           $dump;
    system("$cmd > '$log' 2>&1") == 0 or die "cmrx-dict train --all failed; see $log\n";
    return $dir;
}

# A live node as a cache holds its values: a memcached started with
# @{ $o{args} } (memory enough that nothing is evicted) holding each of
# @{ $o{items} } ([key, bytes]) under $o{copies} keys (the key, a colon, a
# counter), written raw. Returns the server (CMRXDev::Memcached's; stop it).
sub live_node {
    my (%o) = @_;
    require CMRXDev::Memcached;
    require CMRXDev::NodeFill;
    my $server = CMRXDev::Memcached->start(args => [ '-m', 1024, @{ $o{args} || [] } ]);
    my ($i, $copy, $items) = (0, 1, $o{items});
    CMRXDev::NodeFill::fill_node($server->address, sub {
        if ($i == @$items) { ($i, $copy) = (0, $copy + 1) }
        return undef if $copy > $o{copies};
        my $item = $items->[ $i++ ];
        return [ sprintf('%s:%07d', $item->[0], $copy), $item->[1] ];
    });
    return $server;
}

# Runs `cmrx-dict @$args` (with blib's @INC), its standard output and
# error going to $log; dies when it fails. Returns the output.
sub run_cmrx_dict {
    my ($args, $log) = @_;
    my @inc = map { ('-I', $_) } grep { !ref } @INC;
    my $cmd = join ' ', map { "'$_'" } $^X, @inc, "$ROOT/bin/cmrx-dict", @$args;
    system("$cmd > '$log' 2>&1") == 0 or die "cmrx-dict $args->[0] failed; see $log
";
    open my $fh, '<', $log or die "$log: $!\n";
    local $/;
    return scalar <$fh>;
}

# A copy of the set in $dir, in $to, whose dictionaries have 1-byte IDs (1,
# 2, ... in the order of its entries; the same content, levels and
# prefixes, the same fallback and delimiter): what the set would store if
# its IDs were small instead of random (4 bytes in each frame). Returns
# $to. (A process may load both: their IDs differ.)
sub small_id_copy {
    my ($dir, $to) = @_;
    require Cache::Memcached::RustXS::Zstd::DictionarySet;
    my $set = Cache::Memcached::RustXS::Zstd::DictionarySet->read($dir);
    my $copy = Cache::Memcached::RustXS::Zstd::DictionarySet->create($to);
    my $id = 0;
    for my $e ($set->entries) {
        $copy->add(prefix => $e->{prefix}, dictionary => $set->dictionary_bytes($e->{id}), level => $e->{level},
                   id => ++$id, (defined $e->{other_keys} ? (other_keys => $e->{other_keys}) : ()));
    }
    my $fallback = $set->fallback;
    $copy->set_fallback(method => $fallback->{method}, level => $fallback->{level});
    $copy->set_delimiter($set->delimiter) if defined $set->delimiter;
    $copy->write;
    return $to;
}

# Key $id of the population spread over the fill half (\%fill of
# corpus_halves) of @$families: a family in turn, a value of its fill half
# chosen by the id, and the value's key with the id after it. Returns (key,
# value, family). Many keys share a value: what counts is how many items fit.
sub key_of {
    my ($fill, $families, $id) = @_;
    my $family = $families->[ $id % @$families ];
    my $vals = $fill->{$family};
    my $item = $vals->[ (int($id / @$families) * 7919 + ($id >> 5)) % @$vals ];
    return (sprintf('%s:%07d', $item->[0], $id), $item->[1], $family);
}

# The ids 0 .. $n - 1 in a shuffled order (Fisher-Yates with perl's rand:
# seed it with srand first for the same order every time): rank r of a
# Zipf draw is the key $ids->[r].
sub shuffled_ids {
    my ($n) = @_;
    my @id = (0 .. $n - 1);
    for (my $i = $#id; $i > 0; $i--) { my $j = int rand($i + 1); @id[ $i, $j ] = @id[ $j, $i ] }
    return \@id;
}

# The cumulative weights of Zipf($s) over $n ranks (rank r, from 1, has
# weight 1 / r**s): a reference to the array of partial sums.
sub zipf_cdf {
    my ($n, $s) = @_;
    my ($sum, @cdf) = (0);
    push @cdf, $sum += 1 / $_**$s for 1 .. $n;
    return \@cdf;
}

# The rank (from 0) whose weight holds $u, a number in [0, the last partial
# sum): rand($cdf->[-1]) gives a rank drawn from the distribution.
sub zipf_rank {
    my ($cdf, $u) = @_;
    my ($lo, $hi) = (0, $#$cdf);
    while ($lo < $hi) { my $mid = ($lo + $hi) >> 1; if ($cdf->[$mid] < $u) { $lo = $mid + 1 } else { $hi = $mid } }
    return $lo;
}

# A guide to $cdf for zipf_rank_guided: for each of as many equal slices of
# [0, the last partial sum) as there are ranks, the first rank whose partial
# sum reaches the slice's lower end. A draw then starts at its slice's rank
# and steps over about one rank, where the binary search of zipf_rank takes
# log2(n) steps of Perl: drawing 20 keys of 30,000 cost bench/app.pl's
# workers 82 us a request that way, time no application spends.
sub zipf_guide {
    my ($cdf) = @_;
    my ($slices, $total, $rank, @guide) = (scalar @$cdf, $cdf->[-1], 0);
    for my $slice (0 .. $slices - 1) {
        my $lower = $slice * $total / $slices;
        $rank++ while $rank < $#$cdf && $cdf->[$rank] < $lower;
        push @guide, $rank;
    }
    return \@guide;
}

# zipf_rank's rank for $u, found from the guide: the same rank, always (the
# steps back cover a slice number rounded up).
sub zipf_rank_guided {
    my ($cdf, $guide, $u) = @_;
    my $slice = int($u * @$guide / $cdf->[-1]);
    $slice = $#$guide if $slice > $#$guide;
    my $rank = $guide->[$slice];
    $rank-- while $rank > 0 && $cdf->[ $rank - 1 ] >= $u;
    $rank++ while $rank < $#$cdf && $cdf->[$rank] < $u;
    return $rank;
}

# Dies unless zipf_rank_guided gives zipf_rank's rank for Zipf($s) over $n
# ranks at 0, at every partial sum and just below the first thousand, and
# at every slice's lower end, where a rounded slice number would show: a
# run that draws through the guide draws the binary search's keys.
sub check_zipf_guide {
    my ($n, $s) = @_;
    my $cdf   = zipf_cdf($n, $s);
    my $guide = zipf_guide($cdf);
    my $below = $#$cdf < 999 ? $#$cdf : 999;
    for my $u (0, @$cdf, (map { $_ * (1 - 1e-12) } @$cdf[ 0 .. $below ]),
               map { $_ * $cdf->[-1] / @$guide } 0 .. $#$guide) {
        my ($searched, $guided) = (zipf_rank($cdf, $u), zipf_rank_guided($cdf, $guide, $u));
        die "the guided Zipf draw gives rank $guided for $u, the binary search $searched\n"
            if $searched != $guided;
    }
    return;
}

# Fast's default compress_methods: Compress::Zlib's memGzip and memGunzip.
sub gzip_methods {
    return [ sub { ${ $_[1] } = Compress::Zlib::memGzip(${ $_[0] }); 1 },
             sub { my $c = ${ $_[0] }; ${ $_[1] } = Compress::Zlib::memGunzip($c); defined ${ $_[1] } } ];
}

# The set's compress_methods for keys of $prefix (a Fast object per prefix).
sub set_methods {
    my ($dir, $prefix) = @_;
    return Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir, prefix => $prefix);
}

# The set's compress_methods for a Fast object that writes every key (no
# prefix: the set's whole-cache entry), or (undef, why not).
sub one_object_methods {
    my ($dir) = @_;
    my $m = eval { Cache::Memcached::RustXS::Zstd::compress_methods(dictionaries => $dir) };
    return $m if $m;
    (my $why = $@ || 'no methods') =~ s/ at \S+ line \d+\.?\n?\z//;
    $why =~ s/\s+\z//;
    return (undef, $why);
}

# One memcached's stats, read as cmrx-dict reads them.
sub stats { Cache::Memcached::RustXS::Dict::NodeReader->connect($_[0], timeout => 5)->stats }

sub commas { my $n = reverse shift; $n =~ s/(\d{3})(?=\d)/$1,/g; return scalar reverse $n }

# Prints rows of cells, the first column left-aligned, the others right.
sub table {
    my ($head, @rows) = @_;
    my @w;
    for my $r ($head, @rows) { for (0 .. $#$r) { $w[$_] = length $r->[$_] if !defined $w[$_] || length $r->[$_] > $w[$_] } }
    for my $r ($head, @rows) {
        print '  ', join('  ', map { $_ ? sprintf('%*s', $w[$_], $r->[$_]) : sprintf('%-*s', $w[$_], $r->[$_]) } 0 .. $#$r), "\n";
    }
}

1;
