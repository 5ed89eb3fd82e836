#!/usr/bin/perl
# What compressing a value of N bytes buys in memcached's memory, per codec:
# the measurement behind the default compress_threshold of the fast_options
# helpers (Cache::Memcached::RustXS::Zlib and ::Zstd).
#
#   perl -Mblib bench/threshold.pl        # a second or two
#
# For each value of the corpus (bench/data/values, the odd-numbered values
# of each family) cut to N bytes (its first N, and N from its middle; a
# value shorter than N is left out), it computes what
# Cache::Memcached::Fast would store: the compressed bytes when they are at
# most compress_ratio (0.8, Fast's default) of the value, else the value
# raw; and the slab chunk the item takes with its own key (Cache::Memcached::RustXS::Dict::SlabModel: memcached
# 1.6's defaults). Dictionaries: 16 KiB per family, trained on the
# even-numbered values, at level 3 (what compress_methods(dictionary => ...)
# writes with). A cut value stands for a small value of its kind: real
# small values are few in the corpus (4 under 200 bytes); the two cuts show
# how much where the cut is taken matters (a dictionary knows the starts of
# values best). The size it suggests for each codec is the smallest N of
# the grid at which, in both cuts, more than half the items land in a
# smaller chunk. (Sizes only: the time per value is bench/run.pl's.)
use strict;
use warnings;
use FindBin ();
use lib "$FindBin::Bin/../dev/lib";

use CMRXDev::Corpus qw(corpus_values);
use Cache::Memcached::RustXS::Zlib ();
use Cache::Memcached::RustXS::Zstd ();
use Cache::Memcached::RustXS::Dict::SlabModel ();

@ARGV == 0 or die "usage: perl -Mblib bench/threshold.pl\n";

my @CUTS  = ((map { 16 * $_ } 2 .. 20), 384, 512, 768, 1024);
my $RATIO = 0.8;               # Fast's compress_ratio default
my $DICTIONARY_SIZE = 16384;
my $LEVEL = 3;                 # zstd's default, and compress_methods'
my $F_COMPRESS = 2;

my $corpus = corpus_values("$FindBin::Bin/data/values");
my $memory = Cache::Memcached::RustXS::Dict::SlabModel->new;

# Per family: the dictionary (trained on the even half) and the odd half.
my (%dictionary, %held_out);
for my $family (sort keys %$corpus) {
    my @items = @{ $corpus->{$family} };
    my @train = map { $items[$_][1] } grep { $_ % 2 == 0 } 0 .. $#items;
    $held_out{$family} = [ @items[ grep { $_ % 2 == 1 } 0 .. $#items ] ];
    $dictionary{$family} = Cache::Memcached::RustXS::Zstd::train_dictionary(
        \@train, size => $DICTIONARY_SIZE, level => $LEVEL);
}

# codec name => sub (family, [values]) returning [compressed sizes]
my %SIZES = (
    'gzip (Zlib)' => sub {
        my (undef, $values) = @_;
        return [ map { length Cache::Memcached::RustXS::Zlib::memGzip($_) } @$values ];
    },
    'zstd' => sub {
        my (undef, $values) = @_;
        return Cache::Memcached::RustXS::Zstd::frame_sizes($values, level => $LEVEL);
    },
    'zstd + dictionary' => sub {
        my ($family, $values) = @_;
        return Cache::Memcached::RustXS::Zstd::frame_sizes($values, level => $LEVEL,
                                                           dictionary => $dictionary{$family});
    },
);
my @CODECS = ('gzip (Zlib)', 'zstd', 'zstd + dictionary');

# The first $n bytes of $value, or $n from its middle.
my %CUT = (
    head   => sub { my ($value, $n) = @_; return substr $value, 0, $n },
    middle => sub { my ($value, $n) = @_; return substr $value, int((length($value) - $n) / 2), $n },
);
my @WHERE = qw(head middle);

# { values, compressed, smaller (fractions), saved (of the chunk memory) }
# of $codec on the values cut to $n bytes as $where says.
sub measure {
    my ($codec, $n, $where) = @_;
    my ($count, $compressed, $smaller, $raw_memory, $stored_memory) = (0) x 5;
    for my $family (sort keys %held_out) {
        my @items = grep { length $_->[1] >= $n } @{ $held_out{$family} };
        next unless @items;
        my @values = map { $CUT{$where}->($_->[1], $n) } @items;
        my $sizes = $SIZES{$codec}->($family, \@values);
        for my $i (0 .. $#items) {
            my $key = length $items[$i][0];
            my $raw = $memory->item_memory($key, $n, 0);
            my $packed = $sizes->[$i] <= $n * $RATIO;
            my $stored = $packed ? $memory->item_memory($key, $sizes->[$i], $F_COMPRESS) : $raw;
            $count++;
            $compressed++ if $packed;
            $smaller++ if $stored < $raw;
            $raw_memory += $raw;
            $stored_memory += $stored;
        }
    }
    return { values => $count, compressed => $compressed / $count, smaller => $smaller / $count,
             saved => 1 - $stored_memory / $raw_memory };
}

print "Each value cut to N bytes (its first N: head; N from its middle: middle).\n",
      "compressed: stored compressed under compress_ratio $RATIO; smaller: its item lands in a\n",
      "smaller slab chunk; saved: chunk bytes saved over all values of that size\n",
      "(odd-numbered values of bench/data/values, each with its own key).\n\n";
my %suggested;
for my $codec (@CODECS) {
    print "== $codec ==\n";
    (my $over = sprintf '  %5s %6s%s', '', '', join '', map { sprintf '  %-26s', "$_ cut" } @WHERE) =~ s/\s+\z//;
    print "$over\n";
    printf "  %5s %6s%s\n", 'N', 'values', join '', map { sprintf '  %10s %8s %6s', 'compressed', 'smaller', 'saved' } @WHERE;
    for my $n (@CUTS) {
        my %m = map { ($_ => measure($codec, $n, $_)) } @WHERE;
        printf "  %5d %6d%s\n", $n, $m{head}{values}, join '', map {
            sprintf '  %9.0f%% %7.0f%% %5.1f%%', 100 * $m{$_}{compressed}, 100 * $m{$_}{smaller}, 100 * $m{$_}{saved}
        } @WHERE;
        $suggested{$codec} = $n if !defined $suggested{$codec} && !grep { $m{$_}{smaller} <= 0.5 } @WHERE;
    }
    print "\n";
}
print "The smallest N at which more than half the items land in a smaller chunk in both cuts:\n";
printf "  %-18s %s\n", $_, defined $suggested{$_} ? $suggested{$_} : 'none of the grid' for @CODECS;
