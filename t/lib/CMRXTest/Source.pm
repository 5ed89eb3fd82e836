package CMRXTest::Source;

# Test helper: the Perl files of this tree, their code and the subs they
# define, for the tests that read source (t/08's helper homes,
# xt/test-hygiene.t). See the POD at the end of the file.

use strict;
use warnings;

use Exporter 'import';
use File::Find ();

our $VERSION   = '0.01';
our @EXPORT_OK = qw(code_of perl_files subs_defined);

my %code;    # file => its code, read once per process

# The code of a Perl file: without its POD, comments and __END__ part.
sub code_of {
    my ($file) = @_;
    return $code{$file} //= _read_code($file);
}

sub _read_code {
    my ($file) = @_;
    open my $fh, '<', $file or die "$file: $!";
    my $text = do { local $/; <$fh> } // '';
    $text =~ s/^__(?:END|DATA)__\b.*//ms;
    $text =~ s/^=(?!cut\b)\w.*?(?:^=cut\b[^\n]*(?:\n|\z)|\z)//msg;    # POD
    $text =~ s/^=cut\b[^\n]*\n?//mg;
    $text =~ s/(?:^|[ \t\r\f])#[^\n]*//mg;    # comments: a # first or after white space
    return $text;
}

# The names of the named subs the file's code defines (the last part of a
# qualified name), sorted.
sub subs_defined {
    my ($file) = @_;
    my %name = map { ($_ => 1) } code_of($file) =~ /^\s*sub\s+(?:[\w:]*::)?(\w+)/mg;
    return sort keys %name;
}

# The Perl files under the folders (.pm, .pl, .t, and scripts whose first
# line names perl), sorted.
sub perl_files {
    my (@dirs) = @_;
    my @files;
    File::Find::find({ no_chdir => 1, wanted => sub {
        return unless -f $_;
        return push @files, $_ if /\.(?:pm|pl|t)\z/;
        open my $fh, '<', $_ or return;
        my $first = <$fh>;
        push @files, $_ if defined $first && $first =~ /\A#!.*perl/;
    } }, grep { -d } @dirs);
    return sort @files;
}

1;

__END__

=head1 NAME

CMRXTest::Source - the Perl files of this tree, their code and their subs

=head1 SYNOPSIS

    use lib 't/lib';
    use CMRXTest::Source qw(code_of perl_files subs_defined);

    for my $file (perl_files(qw(t xt))) {
        my $code = code_of($file);          # no POD, comments or __END__ part
        my @subs = subs_defined($file);     # the named subs it defines
        ...
    }

=head1 FUNCTIONS

=over 4

=item C<perl_files(@folders)>

The Perl files under the folders that exist: F<.pm>, F<.pl> and F<.t>
files, and files whose first line is a perl C<#!> line; sorted.

=item C<code_of($file)>

The file's code: its POD, its comments (a C<#> at the start of a line or
after white space) and everything from C<__END__> or C<__DATA__> on are
left out. Dies when the file cannot be read. Each file is read once per
process.

=item C<subs_defined($file)>

The names of the named subs the file's code defines (C<sub name> at the
start of a line; of a qualified name, its last part), sorted.

=back

=cut
