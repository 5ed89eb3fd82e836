package CMRXDev::Corpus;

# The corpus of real cache values (bench/data/values), read for the tests
# and the benchmark alike. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';

our $VERSION   = '0.01';
our @EXPORT_OK = qw(corpus_values);

# Family name => [[key, value], ...] in file order, for each FAMILY.values
# file in $dir: a memcached get response (VALUE <key> 0 <bytes>, the bytes,
# CRLF; END).
sub corpus_values {
    my ($dir) = @_;
    my %family;
    opendir my $dh, $dir or die "$dir: $!\n";
    for my $name (sort grep { /\.values\z/ } readdir $dh) {
        my $path = "$dir/$name";
        open my $fh, '<:raw', $path or die "$path: $!\n";
        my @values;
        my $end;
        while (defined(my $line = <$fh>)) {
            if ($line eq "END\r\n") { $end = 1; last }
            my ($key, $len) = $line =~ /\AVALUE (\S+) 0 (\d+)\r\n\z/
                or die "$path: bad line after value " . scalar(@values) . "\n";
            my $got = read $fh, my $data, $len + 2;
            defined $got && $got == $len + 2 && substr($data, -2, 2, '') eq "\r\n"
                or die "$path: value $key is cut short\n";
            push @values, [$key, $data];
        }
        $end && eof $fh or die "$path: no END line at the end\n";
        (my $fam = $name) =~ s/\.values\z//;
        $family{$fam} = \@values;
    }
    return \%family;
}

1;

__END__

=head1 NAME

CMRXDev::Corpus - the corpus of real cache values, for the tests and the benchmark

=head1 SYNOPSIS

    use lib 'dev/lib';
    use CMRXDev::Corpus qw(corpus_values);

    my $family = corpus_values('bench/data/values');
    for my $name (sort keys %$family) {          # api, compat, doc, ...
        for my $item (@{ $family->{$name} }) {
            my ($key, $value) = @$item;
            ...
        }
    }

=head1 DESCRIPTION

F<bench/data/values/> holds 583 real cache-sized values (JSON documents and
HTML fragments) in seven families, one file per family, each a memcached
C<get> response: C<VALUE E<lt>keyE<gt> 0 E<lt>bytesE<gt>>, the bytes, CRLF,
and C<END> at the end (F<bench/data/README.md> says where they come from).
The zstd tests train and measure on them, as the benchmark does.

=over 4

=item C<corpus_values($dir)>

A hash reference: family name (the file name without C<.values>) =>
C<[[key, value], ...]> in file order. Dies naming the file on a line that is
not a C<VALUE> line, a value cut short, or a missing C<END>.

=back

=cut
