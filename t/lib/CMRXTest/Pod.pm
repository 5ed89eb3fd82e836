package CMRXTest::Pod;

# Test helper: the distribution's POD documents, their headings and items,
# and their links. See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use ExtUtils::Manifest ();
use Pod::Simple::SimpleTree ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(pod_documents pod_outline link_problems);

my $LIB = 'lib';

# { name => file } of every installed document: each .pm and .pod under
# lib that MANIFEST lists, by the name perldoc finds it under
# (Cache::Memcached::RustXS::Operations, cmrx-dict), and bin/cmrx-dict.
sub pod_documents {
    my $manifest = ExtUtils::Manifest::maniread();
    my %documents;
    for my $file (grep { m{\A\Q$LIB\E/.+\.(?:pm|pod)\z} } keys %$manifest) {
        (my $name = substr $file, length("$LIB/")) =~ s/\.(?:pm|pod)\z//;
        $documents{ join '::', split m{/}, $name } = $file;
    }
    $documents{'bin/cmrx-dict'} = 'bin/cmrx-dict' if $manifest->{'bin/cmrx-dict'};
    return \%documents;
}

# What a POD text holds: its headings (=head1 to =head4, in order, with
# their level), the nodes a link may name, and its links.
#   { headings => [[level, text], ...], nodes => { text => 1 },
#     links => [{ to, section, text, line }, ...] }
# A node is the plain text of a heading or an =item, and, as Pod::Checker
# and perlfunc have it, the first word of one of several words.
sub pod_outline {
    my ($pod) = @_;
    my $parser = Pod::Simple::SimpleTree->new;
    $parser->no_errata_section(1);
    $parser->complain_stderr(0);
    my $tree = $parser->parse_string_document($pod)->root;
    my %outline = (headings => [], nodes => {}, links => []);
    _walk(\%outline, $tree, 0);
    return \%outline;
}

sub _walk {
    my ($outline, $node, $line) = @_;
    return unless ref $node;
    my ($name, $attr, @children) = @$node;
    $line = $attr->{start_line} if defined $attr->{start_line};
    if ($name =~ /\Ahead([1-4])\z/ || $name =~ /\Aitem-(?:text|bullet|number)\z/) {
        my $text = _plain(@children);
        $text =~ s/\A\s+|\s+\z//g;
        push @{ $outline->{headings} }, [$1, $text] if $name =~ /\Ahead(\d)/;
        $outline->{nodes}{$text} = 1;
        $outline->{nodes}{$1} = 1 if $text =~ /\A(\S+)\s+\S/;
    }
    if ($name eq 'L' && $attr->{type} eq 'pod') {
        push @{ $outline->{links} }, {
            to      => defined $attr->{to} ? "$attr->{to}" : '',
            section => defined $attr->{section} ? "$attr->{section}" : '',
            text    => _plain(@children),
            line    => $line,
        };
    }
    _walk($outline, $_, $line) for @children;
}

sub _plain {
    return join '', map { ref $_ ? _plain(@$_[2 .. $#$_]) : $_ } @_;
}

# The links of $outline (pod_outline's, of the document $name) that go
# into a document of %$documents (pod_documents's, or a module name under
# Cache::Memcached::RustXS that is none of them) and name no document or
# no heading or item of it: "line N: L<to/section>: why", one a problem.
# $outline_of->($file) gives the outline of another document.
sub link_problems {
    my ($name, $outline, $documents, $outline_of) = @_;
    my @problems;
    for my $link (@{ $outline->{links} }) {
        my $to = $link->{to} eq '' ? $name : $link->{to};
        my $internal = $to eq $name;
        next unless $internal || exists $documents->{$to} || $to =~ /\ACache::Memcached::RustXS(?:::|\z)/;
        my $shown = "line $link->{line}: L<$link->{to}" . ($link->{section} eq '' ? '' : "/$link->{section}") . '>';
        unless ($internal || exists $documents->{$to}) {
            push @problems, "$shown: no document $to in this distribution";
            next;
        }
        next if $link->{section} eq '';
        my $target = $internal ? $outline : $outline_of->($documents->{$to});
        push @problems, "$shown: $to has no heading or item \"$link->{section}\""
            unless $target->{nodes}{ $link->{section} };
    }
    return @problems;
}

1;

__END__

=head1 NAME

CMRXTest::Pod - the distribution's POD documents, their headings and links

=head1 SYNOPSIS

    use CMRXTest::Pod qw(pod_documents pod_outline link_problems);
    my $documents = pod_documents();    # { 'Cache::Memcached::RustXS::Zstd' => 'lib/...', ... }
    my $outline = pod_outline($pod_text);
    my @headings = map { $_->[1] } grep { $_->[0] == 1 } @{ $outline->{headings} };
    my @problems = link_problems($name, $outline, $documents, sub { pod_outline(slurp($_[0])) });

=head1 DESCRIPTION

F<xt/pod-links.t> and F<xt/pod-sections.t> read the POD through these
functions, with Pod::Simple, as perldoc and MetaCPAN read it.

=over 4

=item pod_documents()

C<< { name => file } >>: every F<.pm> and F<.pod> under F<lib> that
MANIFEST lists, named as installed (F<lib/cmrx-dict.pod> is
C<cmrx-dict>), and F<bin/cmrx-dict>.

=item pod_outline($pod)

C<< { headings => [[level, text], ...], nodes => { text => 1 }, links =>
[{ to, section, text, line }, ...] } >>: the C<=head1> to C<=head4>
headings, the nodes a link can name (the plain text of each heading and
C<=item>, and the first word of one with several, as Pod::Checker counts
them) and the C<LE<lt>...E<gt>> links to POD documents.

=item link_problems($name, $outline, $documents, $outline_of)

The links of the document C<$name> that go into this distribution (to a
document of C<$documents>, to itself, or to any name under
Cache::Memcached::RustXS) and name a document it lacks or a section its
target lacks, one text each, with the line.

=back

=cut
